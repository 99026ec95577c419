// Package bench measures the move engine against Artemis's own `artemis transfer` and against
// what the brokers themselves can do (`artemis perf`), on the real brokers of a test
// environment. It is run by `make bench` (scripts/bench.sh), which writes BENCHMARKS.md and
// bench/results.json; nothing here runs under `go test` except the pure functions' tests. The
// terraform workspace, processes, ledger database and fills it shares with `make faults` are
// in tools/harness.
//
//	doc.go             this map
//	profile.go         cases, profiles and contenders: what a run measures
//	runner.go          Config and Run: set-up, the cases in turn, the extra measurements
//	warmup.go          the warm-up moves before anything is measured
//	trial.go           one contender moving one filled queue, checked; run queues and clean-up
//	limit.go           the brokers' raw rate (`artemis perf`), the limit a move is held against
//	preflight.go       the preflight timed as a `terraform plan` runs it
//	relay.go           our relay in a child process of its own (RunRelayChild) and its phases
//	terraform.go       ours through a whole `terraform apply`, its provider's memory polled
//	cli.go             the `artemis` CLI: transfer, producer, perf
//	perf.go            `artemis perf` reports
//	verify.go          the check of a run: every message on the target exactly once
//	breakdown.go       the parts of a move's broker CPU, each measured on its own
//	depth.go           the target's store as its queue deepens
//	resume.go          a killed move resumed: how soon its first batch lands
//	scale.go           the scale curve: one queue ever deeper, filled once, copied then moved
//	scale_verify.go    the check of the curve's copy: its target consumed, the source counted
//	scale_brokers.go   the brokers' heap and out-of-memory errors, for the curve's record
//	sampler.go         where a long move's messages are as it goes
//	memory.go          where a relaying process's memory goes at its peak
//	procfs.go          CPU time and peak memory from /proc; medians
//	machine.go         what the numbers were measured on
//	results.go         Results (bench/results.json), medians, ratios and targets met or missed
//	goals.go           the goals on synced brokers: apply, source CPU, a million, memory, resume
//	migration.go       the whole-broker migration: its config, results and contenders
//	migration_layout.go  the migrated broker's queues: long-tailed depths from a seed
//	migration_run.go   one contender's migration: fill, move, check, clean-up
//	migration_apply.go ours: one terraform apply of examples/migrate-broker
//	migration_loop.go  artemis transfer per queue from a shell pipeline (xargs -P)
//	migration_check.go every queue's messages on the target once, the source empty
//	migration_phases.go  where our apply's time went, from terraform's output timed as it came
//	report.go          BENCHMARKS.md: the page and one case's table
//	report_cpu.go      the CPU budget of the goal case and the breakdown's table
//	report_copy.go     the copy beside the move
//	report_memory.go   the large-message memory section
//	report_method.go   how the numbers were taken
//	report_resume.go   the killed-and-resumed runs
//	report_samples.go  a long run's samples and what paging cost it
//	report_brokers.go  the rates on brokers created otherwise, beside these
//	report_migration.go  the whole-broker migration section
//	report_scale.go    the scale curve's section, from one or more runs
//	report_text.go     number and list formatting for the report
package bench
