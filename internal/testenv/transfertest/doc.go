// Package transfertest holds what the engine's tests share across its packages (core, move,
// copying and the front): clients of the test environment's brokers and their contexts, fixture
// queues, producing, browsing and consuming test messages, checking that a target holds a set
// exactly once, a ledger database and Bookkeeper of a test's own, measuring the pace of sends
// and arrivals, and crash children (a package's transfer in a child process that kills itself at
// a named point).
//
// It is imported by _test.go files only, and imports no package of the engine but core, so that
// every package's own tests can use it without an import cycle. A helper that only one package's
// tests need lives in that package's _test.go files instead.
package transfertest
