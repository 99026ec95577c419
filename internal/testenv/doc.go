// Package testenv gives tests the real brokers and PostgreSQL started by scripts/testenv.sh.
//
// Tests use only an environment they were pointed at: ARTEMIS_TESTENV_FILE (its testenv.json)
// or ARTEMIS_TESTENV_DIR (its state folder). There is no default, so that a `go test` run never
// finds somebody else's environment and runs against it. Tests that need brokers call Require;
// without a pointer they are skipped, unless ARTEMIS_TESTENV_REQUIRED=1, which `make test` and CI
// set so that a missing environment fails the run instead of passing it by skipping.
//
// Tests that kill, stop or start brokers call RequireOwned: they also need the environment's
// owner token (ARTEMIS_TESTENV_OWNER, recorded by `scripts/testenv.sh up`), so that they never
// take down the brokers of an environment another run is using.
//
// # Isolation
//
// Tests share one environment and run in parallel, so each makes what it uses its own: queue
// names made unique per test, a PostgreSQL database of its own (dropped when the test ends),
// and clients closed by the test's cleanup. A fault a test needs on the network (connections
// cut, stalled or swallowed, a port that refuses, a name that moves to another server) comes
// from a Proxy of its own in front of the broker or database, never from the shared servers.
//
// It is for tests and test tools only: the provider never imports it.
package testenv
