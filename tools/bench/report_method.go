package bench

import (
	"fmt"
	"sort"
	"strings"
)

func writeMethod(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## How it was measured\n\n")
	p("- **Brokers**: `source` and `target` (Artemis %s) as `scripts/testenv.sh up` creates them (1 GiB heap, 127.0.0.1, `--require-login`), journal: %s; in a state folder of their own with shifted ports, started by `make bench` and stopped at its end. Every process runs on this one machine.\n",
		res.Machine.Artemis, brokersText(res.Brokers))
	if w := res.WarmupSourceMicros; len(w) > 0 {
		parts := make([]string, len(w))
		for i, v := range w {
			parts[i] = fmt.Sprintf("%.0f", v)
		}
		p("- **Warm-up**: before anything is measured, our relay moved %s x 1 KiB until the source broker's CPU per message of a move came within %.0f%% of the move before (at most %d moves; a fresh broker's JIT compiles for the first few hundred thousand messages), then each other warm-up contender moved it once. Source µs/msg of the warm-up moves: %s.\n",
			groupThousands(int64(res.Profile.WarmupCount)), warmupSettled*100, warmupMaxMoves, strings.Join(parts, ", "))
	}
	p("- **Fill**: before every run, a fresh source and target queue. A case marked Core fill or AMQP fill gets its durable messages from Artemis's CLI producer over that protocol (one thread, so that its `count` property numbers them, committing every 1,000, with the fill's tag as a property); any other from our pipelined AMQP producer, each with a unique sequence number and the fill's tag as application properties.")
	for _, k := range []string{"fill-core", "fill-amqp"} {
		if cl, ok := res.CommandLines[k]; ok {
			p(" %s: `%s`.", k, cl)
		}
	}
	p("\n")
	t := res.RelayTuning
	p("- **Ours**: `transfer.Engine.Move` as user `%s`, in a child process (the bench binary re-executed) that reads its own peak RSS (VmHWM) at the end; engine options %s. ", res.RelayUser, tuningText(t))
	p("Staging is from the first progress report to the one where the whole selection is staged, relay from the first report of the relaying phase (or of a relayed message) to the finishing phase; total is the child's wall time (preflight, staging set-up and clean-up included).\n")
	p("- **Ours (copy)**, where measured: `transfer.Engine.Copy` of the same kind of queue, in the same kind of child process, with the ledger the engine needs to record what it copied: a database created for the benchmark run on the test environment's PostgreSQL (opening it, and its schema, is part of each run's time) and dropped at its end.\n")
	p("- **Ours (terraform apply)**, where measured: a whole `terraform apply -auto-approve` of one `artemis_queue_transfer`, in a fresh working folder, with the provider built by `make bench` as a release is built (`CGO_ENABLED=0`, `-trimpath -ldflags \"-s -w\"`, as .goreleaser.yml) and used through dev_overrides: terraform and provider start, plan with its preflight, the move and the state write, as a user waits for them. Its client CPU is terraform's and the provider's; its peak RSS is the provider's VmHWM polled every 100 ms.\n")
	p("- **artemis transfer**: the CLI of the brokers' distribution, as admin, with `--message-count` set to the case's count so that it stops as soon as all moved (not after its receive timeout). Its default commit interval, from `artemis help transfer`: %d. Command lines (password hidden):\n", res.TransferDefaultCommit)
	for _, c := range res.Contenders {
		if cl, ok := res.CommandLines[c.ID]; ok {
			p("  - %s: `%s`\n", c.Label, cl)
		}
	}
	over := "the rate"
	if res.Profile.PerfReps > 1 {
		over = fmt.Sprintf("the median over %d repetitions of the rate", res.Profile.PerfReps)
	}
	p("- **Raw limit**: per message size and protocol, %s of a durable `artemis perf producer` sending for %d s to a fresh target queue, and of an `artemis perf consumer` taking everything a perf producer put on a fresh source queue in %d s; `--max-pending` is 1000 messages or 32 MiB, whichever is fewer. The first %d one-second intervals of each report (the JIT warm-up of client and broker) are left out of the rate (fewer for a consumer that finished sooner, keeping at least two). A case's limit is the lower of the two rates, over the protocol where that is higher. Command lines:\n",
		over, res.Profile.PerfSeconds, res.Profile.PerfSeconds, res.Profile.PerfSkip)
	keys := make([]string, 0, len(res.CommandLines))
	for k := range res.CommandLines {
		if strings.HasPrefix(k, "perf-") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p("  - %s: `%s`\n", k, res.CommandLines[k])
	}
	p("- **Correctness** of every run: the source queue is empty, the target queue counts exactly the case's messages, consuming them yields every sequence number of the fill once and nothing else, and (ours) no staging queue is left; after a copy, instead of an empty source, the source still counts the case's messages and consuming it yields every sequence number of the fill once. A run that fails any of these is reported as failed, not as a result.\n")
	p("- **Peak RSS**: ours is exact (the relay process's own VmHWM; under terraform apply, the provider's VmHWM, a high-water mark the poll cannot miss). For artemis transfer it is the JVM's VmHWM polled every 100 ms, shown for comparison only.\n")
	p("- **Broker CPU**: utime+stime from `/proc/<pid>/stat` of each broker JVM, read before and after each run.\n")
	p("- **Preflight**: `Engine.Preflight` (what `terraform plan` runs), timed %d times per case on the case's first filled source queue, each with new clients as a plan's new provider process has.\n", preflightRuns)
}

func tuningText(t RelayTuning) string {
	parts := []string{}
	if t.ChunkSize > 0 {
		parts = append(parts, fmt.Sprintf("chunk %d", t.ChunkSize))
	}
	if t.BatchSize > 0 {
		parts = append(parts, fmt.Sprintf("batch %d", t.BatchSize))
	}
	if t.MaxInFlightBytes > 0 {
		parts = append(parts, fmt.Sprintf("in flight %d bytes", t.MaxInFlightBytes))
	}
	if len(parts) == 0 {
		return "the defaults"
	}
	return strings.Join(parts, ", ") + " (others default)"
}

func caseList(cases []Case) string {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.Name()
		var how []string
		if c.Reps > 0 {
			how = append(how, plural(c.Reps, "repetition"))
		}
		if len(c.Only) > 0 {
			how = append(how, "only "+strings.Join(c.Only, " and "))
		}
		if len(how) > 0 {
			names[i] += " (" + strings.Join(how, ", ") + ")"
		}
	}
	return strings.Join(names, "; ")
}
