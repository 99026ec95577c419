// Package bench measures the move engine against Artemis's own `artemis transfer` and against
// what the brokers themselves can do (`artemis perf`), on the real brokers of a test
// environment. It is run by `make bench` (scripts/bench.sh), which writes BENCHMARKS.md and
// bench/results.json; nothing here runs under `go test` except the pure functions' tests. The
// terraform workspace, processes, ledger database and fills it shares with `make faults` are
// in tools/harness.
//
// # What it measures
//
// Each case (COUNTxSIZE, repetitions, a fill) is moved by each contender in turn, alternating,
// on freshly filled queues: our relay in a child process, ours through a whole `terraform
// apply`, and `artemis transfer`. Each trial is checked (every message on the target once, the
// source empty) before its numbers count; a trial that fails its check is reported, never
// averaged in. Beside the cases it measures the brokers' raw rate (`artemis perf`), the parts of
// a move's broker CPU each on its own, the target's store as it deepens, a killed move's resume,
// large-message memory, the scale curve (one queue ever deeper, copied then moved) and the
// migration of a whole broker (examples/migrate-broker against `artemis transfer` per queue, in
// rounds), small moves (a few short queues by one apply, each move's own time), the management
// sessions' broker CPU (the console's session kept against Basic authentication each time), and,
// with a baseline revision's provider, today's apply against that revision's in the same run.
//
// # Rules
//
//   - Rates are medians over a contender's correct runs, never its best run, and the machine's
//     load is recorded beside them.
//   - CPU and memory come from /proc of the processes measured, brokers included.
//   - Results are written as JSON (bench/results*.json); BENCHMARKS.md is rendered from them
//     alone, so a page always says what a results file holds.
package bench
