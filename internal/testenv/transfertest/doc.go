// Package transfertest holds what the engine's tests share across its packages (core, move,
// copying and the front): clients of the test environment's brokers, fixture queues, producing,
// browsing and consuming test messages, checking that a target holds a set exactly once, and a
// ledger database, and crash children. It is imported by tests only, and imports no package of the engine but core,
// so that every package's own tests can use it.
//
//   - brokers.go: clients, contexts, fixture queues, queue depths, removing a spec's runs
//   - messages.go: producing, browsing and consuming messages; checking what a target holds
//   - ledger.go: a ledger database of the test environment, and a run's event kinds
//   - fixtures.go: a spec for pure tests, a Bookkeeper over a ledger, describing messages' values
//   - child.go: running a package's transfer in a child process that kills itself at a point
//   - pace.go: measuring the pace of sends and arrivals, and consuming with arrival times
package transfertest
