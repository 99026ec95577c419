package bench

import (
	"fmt"
	"strings"
	"time"
)

// maxSampleRows bounds a run's table of samples; a longer run shows every few samples.
const maxSampleRows = 25

// writeSamples shows where a long run's messages were as it went, with the target's rate
// between two rows and which addresses paged.
func writeSamples(b *strings.Builder, t Trial, label string) {
	if len(t.Samples) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	step := (len(t.Samples) + maxSampleRows - 1) / maxSampleRows
	p("Where the messages were during %s, repetition %d (every %s%s; -1: not read):\n\n", label, t.Rep, sampleEvery*time.Duration(step), failedText(t.Error))
	p("| s | source | staged | target | target msg/s since the row before | paging |\n|---:|---:|---:|---:|---:|---|\n")
	prevAt, prevTarget := 0.0, int64(0)
	for i := step - 1; i < len(t.Samples); i += step {
		s := t.Samples[i]
		rate := "–"
		if s.Target >= 0 && prevTarget >= 0 && s.At > prevAt {
			rate = num(float64(s.Target-prevTarget) / (s.At - prevAt))
		}
		var paging []string
		for _, pg := range []struct {
			on   bool
			name string
		}{{s.SourcePaging, "source"}, {s.StagingPaging, "staging"}, {s.TargetPaging, "target"}} {
			if pg.on {
				paging = append(paging, pg.name)
			}
		}
		p("| %.0f | %s | %s | %s | %s | %s |\n", s.At, groupThousands(s.Source), groupThousands(s.Staged), groupThousands(s.Target), rate, strings.Join(paging, ", "))
		prevAt, prevTarget = s.At, s.Target
	}
	p("\n")
	if line := pagingSummary(t.Samples); line != "" {
		p("%s\n\n", line)
	}
}

// pagingSummary sets the target's rate before its address began to page beside its rate
// after, over whole sampling intervals, with the most messages staged at once: what paging on
// the target costs the run, and how far staging ran ahead of the relay.
func pagingSummary(samples []Sample) string {
	type span struct {
		seconds float64
		stored  int64
	}
	var before, after span
	var mostStaged int64 = -1
	for i := 1; i < len(samples); i++ {
		prev, s := samples[i-1], samples[i]
		mostStaged = max(mostStaged, s.Staged)
		if s.Target < 0 || prev.Target < 0 || s.At <= prev.At {
			continue
		}
		into := &before
		if prev.TargetPaging {
			into = &after
		}
		into.seconds += s.At - prev.At
		into.stored += s.Target - prev.Target
	}
	if before.seconds == 0 || after.seconds == 0 {
		return ""
	}
	line := fmt.Sprintf("The target stored %s msg/s before its address began to page (%.0f s) and %s msg/s while it paged (%.0f s).",
		num(float64(before.stored)/before.seconds), before.seconds, num(float64(after.stored)/after.seconds), after.seconds)
	if mostStaged >= 0 {
		line += fmt.Sprintf(" At most %s messages were staged at once.", groupThousands(mostStaged))
	}
	return line
}
