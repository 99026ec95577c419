package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// smallMoveTarget is the median move the small moves are measured against.
const smallMoveTarget = 2.0

// writeSmallMoves writes the small moves section from a small moves run's results, stored at
// path (relative to the report).
func writeSmallMoves(b *strings.Builder, res *SmallMovesResults, path string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	m := res.Machine
	p("## Small moves\n\n")
	p("A separate run (`BENCH_PARTS=small make bench`) on %s brokers, from commit `%s` on %s, %s in all; load average %s at its start, %s at its end. Raw results: [%s](%s).\n\n",
		orUnknown(res.Brokers), m.Commit, m.Date, (time.Duration(res.Seconds) * time.Second).String(), m.LoadAtStart, m.LoadAtEnd, path, path)
	if busy(m.LoadAtStart, m.Cores) || busy(m.LoadAtEnd, m.Cores) {
		p("> This machine has %d cores and was shared: a load average above %d means other work competed with this run for them.\n\n", m.Cores, m.Cores)
	}
	if !res.Complete {
		p("> **Incomplete run**: it stopped early (%s). What ran is shown.\n\n", res.Error)
	}
	p("%d queues of %d x %s, their target queues created beforehand, moved by one `terraform apply -parallelism=%d` of %d `artemis_queue_transfer` resources; %d %s, each on freshly filled queues. A move's time is its resource's `duration_seconds` in state (the provider's own timing); its span is from terraform's `Creating...` line of the resource to its `Creation complete` line, as the lines arrived.\n\n",
		res.Queues, res.Count, harness.SizeName(res.Size), res.Parallel, res.Queues, res.Reps, map[bool]string{true: "apply", false: "applies"}[res.Reps == 1])
	md := res.Medians()
	if md.OK > 0 {
		verdict := "met"
		if md.Move > smallMoveTarget {
			verdict = "**not met**"
		}
		p("**Median move %.2f s over %d moves of %d correct applies (the target, at most %.0f s: %s); median span %.2f s; median apply %.1f s.**\n\n",
			md.Move, md.Moves, md.OK, smallMoveTarget, verdict, md.Span, md.Apply)
	}
	p("| apply | wall s | moves: median s | fastest s | slowest s | spans: median s | source broker CPU s | target broker CPU s | client CPU s | load at start | load at end | correct |\n")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n")
	for _, r := range res.Runs {
		var moves, spans []float64
		for _, mv := range r.Moves {
			moves, spans = append(moves, mv.Seconds), append(spans, mv.SpanSeconds)
		}
		lo, hi := minMax(moves)
		correct := "yes: " + fmt.Sprintf("%d/%d queues, %s messages once", r.Check.QueuesOK, r.Check.Queues, groupThousands(r.Check.Distinct))
		if !r.OK {
			correct = "**NO**: " + oneLine(r.Error)
		}
		p("| %d | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %s | %s | %s |\n", r.Rep, r.Process.WallSeconds, Median(moves), lo, hi,
			Median(spans), r.SourceCPU, r.TargetCPU, r.Process.CPUSeconds, r.LoadAtStart, r.LoadAtEnd, correct)
	}
	p("\nThe check after each apply: for every queue, the source queue is empty and the target queue counts exactly %d; every target queue is then consumed and each message's sequence number must come exactly once, with nothing else; no staging queue may be left on the source.\n\n", res.Count)
}

func minMax(v []float64) (lo, hi float64) {
	for i, x := range v {
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
}
