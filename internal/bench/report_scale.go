package bench

import (
	"fmt"
	"strings"
	"time"
)

// writeScale writes the scale curve of res: our relay's rate and peak memory as one queue
// deepens. from, when set, says that res is a run of its own (a results file), whose commit,
// date and load are given.
func writeScale(b *strings.Builder, res *Results, from string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	pts := res.Scale.Points
	p("## Scale curve\n\n")
	if from != "" {
		m := res.Machine
		p("From a run of its own ([%s](%s), profile `%s`, `BENCH_PARTS=scale make bench`): commit `%s`, %s, %s; brokers: %s; load average %s at the start, %s at the end (other work on the machine shows here). ",
			from, from, res.Profile.Name, m.Commit, m.Date, (time.Duration(res.Seconds) * time.Second).String(), brokersText(res.Brokers), m.LoadAtStart, m.LoadAtEnd)
	}
	p("One queue of 1 KiB messages at each depth, filled once by Artemis's CLI producer over Core; our relay copies it (`Engine.Copy`, recording in its ledger) to a target queue, and then moves the same queue (`Engine.Move`) to another: a copy leaves the source as it was, so one fill serves both. ")
	p("Each run is checked for loss and doubles: the copy's target is consumed (every message of the fill once, nothing else), the source must still count the whole fill and no staging may be left; that target is then removed, and the move's target is consumed the same way, with nothing left on the source, which also shows that the copy left every message of the source in place. ")
	p("One run per depth. msg/s is the depth over the relay child's wall time (process start to exit, checks not included); peak RSS is the child's VmHWM. ")
	if n := len(res.WarmupSourceMicros); n > 0 {
		then := ""
		if len(res.Contenders) > 1 {
			then = ", then once with " + res.Contenders[1].Label
		}
		p("Before the first depth the brokers were warmed up (not measured) by %s of %s x 1 KiB with our relay, until the source's CPU per message settled%s. ",
			plural(n, "move"), groupThousands(int64(res.Profile.WarmupCount)), then)
	}
	p("The brokers have the test environment's 1 GiB heap (`artemis create --java-memory 1G`); a queue deeper than the broker's memory for messages is paged to disk, as on an operator's broker, which the column *source paged* shows.\n\n")
	if !res.Complete {
		p("> **Incomplete run**: it stopped early (%s). The depths that ran are shown.\n\n", oneLine(res.Error))
	}
	p("| messages | fill msg/s | source paged | move msg/s | copy msg/s | move peak RSS MiB | copy peak RSS MiB | checks s (copy, move) | correct (move, copy) |\n")
	p("|---:|---:|:---:|---:|---:|---:|---:|---:|:---:|\n")
	var failed []string
	for _, pt := range pts {
		moveRate, moveRSS, moveOK := trialCells(pt.Move)
		copyRate, copyRSS, copyOK := trialCells(pt.Copy)
		paged := "no"
		if pt.SourcePaging {
			paged = "yes"
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %.0f, %.0f | %s, %s |\n", groupThousands(int64(pt.Case.Count)), num(pt.Fill.MsgsPerSec), paged,
			moveRate, copyRate, moveRSS, copyRSS, pt.CopyCheckSeconds, pt.MoveCheckSeconds, moveOK, copyOK)
		for _, t := range []*Trial{pt.Copy, pt.Move} {
			if t != nil && !t.OK {
				failed = append(failed, fmt.Sprintf("- %s, %s: %s", pt.Name, t.Contender, oneLine(t.Error)))
			}
		}
		if pt.Refilled {
			failed = append(failed, fmt.Sprintf("- %s: the copy failed, so the move took a fresh fill", pt.Name))
		}
	}
	p("\n")
	if s := scaleComparison(pts); s != "" {
		p("%s\n\n", s)
	}
	if len(failed) > 0 {
		p("Failed runs:\n\n%s\n\n", strings.Join(failed, "\n"))
	}
}

// trialCells are a run's rate, peak RSS and correctness as table cells; dashes when it did not run.
func trialCells(t *Trial) (rate, rss, ok string) {
	switch {
	case t == nil:
		return "–", "–", "–"
	case !t.OK:
		return "**FAILED**", "–", "**no**"
	}
	return num(t.MsgsPerSec), fmt.Sprintf("%.1f", float64(t.Process.PeakRSSKiB)/1024), "yes"
}

// scaleComparison says how the deepest correct depth's rates and peak memory compare with the
// shallower ones': one sentence per contender, empty when fewer than two depths are correct.
func scaleComparison(pts []ScalePoint) string {
	var out []string
	for _, side := range []struct {
		what string
		of   func(ScalePoint) *Trial
	}{{"move", func(p ScalePoint) *Trial { return p.Move }}, {"copy", func(p ScalePoint) *Trial { return p.Copy }}} {
		var ok []ScalePoint
		for _, pt := range pts {
			if t := side.of(pt); t != nil && t.OK {
				ok = append(ok, pt)
			}
		}
		if len(ok) < 2 {
			continue
		}
		deep := ok[len(ok)-1]
		dt := side.of(deep)
		var vs []string
		for _, pt := range ok[:len(ok)-1] {
			if len(vs) == 2 {
				break // the two shallowest: the cases of issue #6
			}
			vs = append(vs, fmt.Sprintf("%.0f%% of its rate at %s (%s msg/s)", 100*dt.MsgsPerSec/side.of(pt).MsgsPerSec,
				groupThousands(int64(pt.Case.Count)), num(side.of(pt).MsgsPerSec)))
		}
		lo, hi := dt.Process.PeakRSSKiB, dt.Process.PeakRSSKiB
		for _, pt := range ok {
			lo, hi = min(lo, side.of(pt).Process.PeakRSSKiB), max(hi, side.of(pt).Process.PeakRSSKiB)
		}
		out = append(out, fmt.Sprintf("At %s our %s ran at %s msg/s: %s. Its peak RSS stayed between %.1f and %.1f MiB over the depths (%.1f MiB at %s).",
			groupThousands(int64(deep.Case.Count)), side.what, num(dt.MsgsPerSec), strings.Join(vs, " and "),
			float64(lo)/1024, float64(hi)/1024, float64(dt.Process.PeakRSSKiB)/1024, groupThousands(int64(deep.Case.Count))))
	}
	return strings.Join(out, " ")
}
