package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// writeMigration writes the whole-broker migration section from a migration run's results,
// stored at path (relative to the report).
func writeMigration(b *strings.Builder, res *MigrationResults, path string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	m, l, t := res.Machine, res.Layout, res.Totals
	p("## Migration of a whole broker\n\n")
	p("A separate run (`BENCH_PARTS=migration make bench`) on %s brokers, from commit `%s` on %s, %s in all; load average %s at its start, %s at its end. Raw results: [%s](%s).\n\n",
		orUnknown(res.Brokers), m.Commit, m.Date, (time.Duration(res.Seconds) * time.Second).String(), m.LoadAtStart, m.LoadAtEnd, path, path)
	if busy(m.LoadAtStart, m.Cores) || busy(m.LoadAtEnd, m.Cores) {
		p("> This machine has %d cores and was shared: a load average above %d means other work competed with this run for them, which slows every contender and makes a repeat differ.\n\n", m.Cores, m.Cores)
	}
	if !res.Complete {
		p("> **Incomplete run**: it stopped early (%s). What ran is shown.\n\n", res.Error)
	}
	p("The source broker holds %d queues, %s messages (%s MiB), their depths a long tail drawn from seed %d: %s. ",
		l.Queues, groupThousands(t.Messages), groupThousands(t.Bytes/mib), l.Seed, layoutText(l, t))
	reps := max(res.Reps, 1)
	if reps > 1 {
		p("The contenders ran in %d rounds, each contender once per round, the order rotated by one each round so that none always runs first or last. ", reps)
	}
	p("Before each run the source is filled the same again (one Go process, our pipelined AMQP sender, %d queues at a time) and the target holds none of the queues; each run moves every queue once.\n\n", migrationFillers)

	sums := SummarizeMigration(res.Runs)
	if reps > 1 {
		p("Medians over each contender's correct runs:\n\n")
	}
	p("| contender | correct runs | wall s | messages | msg/s | source broker CPU s | target broker CPU s | client CPU s |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sums {
		if s.OK == 0 {
			p("| %s | **0 of %d** | | | | | | |\n", s.Label, s.Runs)
			continue
		}
		p("| %s | %d of %d | %.1f | %s | %s | %.1f | %.1f | %.1f |\n", s.Label, s.OK, s.Runs, s.Wall, groupThousands(res.Totals.Messages),
			num(s.MsgsPerSec), s.SourceCPU, s.TargetCPU, s.ClientCPU)
	}
	p("\n")
	if line := migrationRatio(sums, reps); line != "" {
		p("%s\n\n", line)
	}
	if line := migrationPlanLine(sums); line != "" {
		p("%s\n\n", line)
	}

	p("Every run, in the order they ran:\n\n")
	p("| round | contender | wall s | msg/s | MiB/s | source broker CPU s | target broker CPU s | client CPU s | plan s | load at start | load at end | correct |\n")
	p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n")
	for _, r := range res.Runs {
		plan := ""
		if r.PlanSeconds > 0 {
			plan = fmt.Sprintf("%.1f", r.PlanSeconds)
		}
		if r.Process.WallSeconds == 0 {
			p("| %d | %s | **FAILED** | | | | | | %s | %s | %s | %s |\n", max(r.Round, 1), r.Label, plan, r.LoadAtStart, r.LoadAtEnd, oneLine(r.Error))
			continue
		}
		p("| %d | %s | %.1f | %s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s | %s |\n", max(r.Round, 1), r.Label, r.Process.WallSeconds,
			num(r.MsgsPerSec), r.MiBPerSec, r.SourceCPU, r.TargetCPU, r.Process.CPUSeconds, plan, r.LoadAtStart, r.LoadAtEnd, correctText(r))
	}
	p("\n")

	p("How each ran:\n\n")
	loopShown := false
	for _, r := range firstRuns(res.Runs) {
		switch {
		case r.Contender != MigrationApply && loopShown:
			p("- %s: the same pipeline with `-P %d`, %d `artemis transfer` runs; its target queues created beforehand, not counted.\n",
				r.Label, r.Parallel, r.Invocations)
			continue
		case r.Contender != MigrationApply:
			loopShown = true
		}
		switch r.Contender {
		case MigrationApply:
			before := "and then a `terraform plan` of the configuration alone (timed: the plan above), ran before the apply, not counted in its wall time or the brokers' CPU"
			if res.Reps == 0 {
				// Results from before the rounds read the brokers' CPU before step one.
				before = "ran before the apply, not counted in its wall time but in the brokers' CPU"
			}
			p("- %s: `%s`, the provider built by `make bench` (dev_overrides), the brokers' admin user. Step one of the recipe, `inventory/main.tf` applied (its data sources read the source's queues) and `terraform output -json` writing them down, %s (step one took %s). The one apply (`main.tf` and `move.tf`) declares each target queue with its address and address settings like the source's, and moves every queue with an `artemis_queue_transfer`; its wall time includes all of that. Client CPU is terraform's and the provider's; the provider's peak RSS was %.1f MiB.\n",
				r.Label, r.CommandLine, before, runSeconds(res.Runs, r.Contender, func(r MigrationRun) float64 { return r.InventorySeconds }), float64(r.Process.PeakRSSKiB)/1024)
			if ph := r.Phases; ph != nil {
				p("  Inside it (terraform's output, each line timed as it came): the plan until the first resource was created at %.0f s; the %d target addresses, address settings and queues created by %.0f s; the first queue's move started at %.0f s and the last ended at %.0f s. A move took median %.0f s, longest %.0f s, %.0f s added up over %d moves, %d at a time at most. Of the client CPU, %.1f s was the provider's (polled) and %.1f s terraform's.\n",
					ph.PlanSeconds, ph.Objects, ph.ObjectsSeconds, ph.FirstMoveSeconds, ph.LastMoveSeconds, ph.MoveMedian, ph.MoveMax, ph.MoveSum, ph.Moves, r.Parallel,
					ph.ProviderCPU, r.Process.CPUSeconds-ph.ProviderCPU)
			}
		default:
			p("- %s: `%s`, one `artemis transfer` (core, its default commit interval%s) per non-empty queue, %d in all, each given its queue's depth (`--message-count`) so that it ends as soon as the queue is moved; the empty queues need no transfer. The target queues were created before the loop through the management API, as the source's were, in %s, not counted in the wall time. Client CPU is the shell's, xargs's and every JVM's.\n",
				r.Label, r.CommandLine, defaultCommitText(res.TransferDefaultCommit), r.Invocations,
				runSeconds(res.Runs, r.Contender, func(r MigrationRun) float64 { return r.TargetsSeconds }))
		}
	}
	p("\nThe check after each: for every queue, the source queue is empty and the target queue counts exactly the queue's depth; every non-empty target queue is then consumed and each message's sequence number (a property set by the fill, with the fill's tag) must come exactly once, with nothing else; no staging queue may be left on the source. Fill times: %s.\n\n",
		fillTimes(res.Runs))
	for _, r := range res.Runs {
		if !r.OK {
			p("Failed: %s: %s\n\n", r.Label, oneLine(r.Error))
		}
	}
}

// layoutText says what the layout's queues hold.
func layoutText(l MigrationLayout, t MigrationTotals) string {
	size := harness.SizeName(l.Size)
	parts := []string{
		fmt.Sprintf("%d of %s x %s", l.Deep, groupThousands(int64(l.DeepCount)), size),
		fmt.Sprintf("%d of %s x %s", l.Mid, groupThousands(int64(l.MidCount)), size),
		fmt.Sprintf("%d of %d x %s (%s large messages in the broker's store)", l.Large, l.LargeCount, harness.SizeName(l.LargeSize), groupThousands(int64(t.LargeMessages))),
		fmt.Sprintf("%d holding 1 to %d x %s (log-uniform: as many of 1-9 as of 10-99 and of 100-999)", t.Short, l.ShortMax, size),
		fmt.Sprintf("%d empty", t.Empty),
	}
	return strings.Join(parts, ", ")
}

func correctText(r MigrationRun) string {
	c := r.Check
	if r.OK {
		return fmt.Sprintf("yes: %d/%d queues, %s messages once", c.QueuesOK, c.Queues, groupThousands(c.Distinct))
	}
	if c.Queues == 0 {
		return "**not checked**"
	}
	return fmt.Sprintf("**NO**: %s", oneLine(c.Problem()))
}

// migrationRatio compares our apply's median with the median of the faster of the artemis
// transfer loops (the lower median wall time), each over its correct runs.
func migrationRatio(sums []MigrationSummary, reps int) string {
	ours, fastest := migrationHeadline(sums)
	if ours == nil || fastest == nil {
		return ""
	}
	head := fmt.Sprintf("Our apply against the faster artemis transfer loop (%s)", fastest.Label)
	if reps > 1 {
		head = fmt.Sprintf("Our apply's median against the median of the faster artemis transfer loop (%s)", fastest.Label)
	}
	return fmt.Sprintf("**%s: %.2fx its wall time (%.1f s against %.1f s), %.2fx its rate; source broker CPU %.2fx (%.1f s against %.1f s), target broker CPU %.2fx.**",
		head, ours.Wall/fastest.Wall, ours.Wall, fastest.Wall,
		fastest.Wall/ours.Wall, ratio(ours.SourceCPU, fastest.SourceCPU), ours.SourceCPU, fastest.SourceCPU, ratio(ours.TargetCPU, fastest.TargetCPU))
}

// migrationPlanLine states the standalone plan of our apply's configuration.
func migrationPlanLine(sums []MigrationSummary) string {
	for _, s := range sums {
		if s.Contender != MigrationApply || s.Plans == 0 {
			continue
		}
		med := ""
		if s.Plans > 1 {
			med = fmt.Sprintf("median of %d, ", s.Plans)
		}
		return fmt.Sprintf("**Plan of %d queues: %.1f s** (%s`terraform plan -parallelism=%d` of the apply's configuration alone, after step one, with the source filled and the target empty; the target is at most 10 s for 200 queues).",
			s.PlanQueues, s.Plan, med, s.Parallel)
	}
	return ""
}

// firstRuns is each contender's first run, in the order the contenders first ran: how each ran
// is told once.
func firstRuns(runs []MigrationRun) []MigrationRun {
	var out []MigrationRun
	seen := map[string]bool{}
	for _, r := range runs {
		if !seen[r.Contender] {
			seen[r.Contender] = true
			out = append(out, r)
		}
	}
	return out
}

// runSeconds is a figure of each of a contender's runs, in seconds, as "4.5 s" or "4.5, 4.1 and
// 4.7 s".
func runSeconds(runs []MigrationRun, contender string, figure func(MigrationRun) float64) string {
	var parts []string
	for _, r := range runs {
		if r.Contender == contender {
			parts = append(parts, fmt.Sprintf("%.1f", figure(r)))
		}
	}
	switch len(parts) {
	case 0:
		return "unrecorded"
	case 1:
		return parts[0] + " s"
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " s"
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func defaultCommitText(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(", %d", n)
}

func fillTimes(runs []MigrationRun) string {
	var parts []string
	for _, r := range runs {
		if r.Fill.Seconds > 0 {
			parts = append(parts, fmt.Sprintf("%.0f s before %s in round %d (%s msg/s)", r.Fill.Seconds, r.Contender, max(r.Round, 1), num(r.Fill.MsgsPerSec)))
		}
	}
	if len(parts) == 0 {
		return "none recorded"
	}
	return strings.Join(parts, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unrecorded"
	}
	return s
}

// busy says whether a load average line ("1.0 2.0 3.0") shows more runnable work over the last
// minute than the machine has cores.
func busy(load string, cores int) bool {
	var one float64
	if _, err := fmt.Sscan(load, &one); err != nil || cores <= 0 {
		return false
	}
	return one > float64(cores)
}
