package bench

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// ScaleRun is one run of the scale curve and where its results are (empty: the page's own run).
type ScaleRun struct {
	Results *Results
	Path    string
}

// scaleRow is one depth of one run, for the table.
type scaleRow struct {
	ScalePoint
	heap string
}

// writeScale writes the scale curve: our relay's rate and peak memory as one queue deepens,
// from one or more runs (each a results file of its own), their depths in one table.
func writeScale(b *strings.Builder, runs []ScaleRun) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Scale curve\n\n")
	var rows []scaleRow
	for _, run := range runs {
		res := run.Results
		m := res.Machine
		if run.Path != "" {
			p("From a run of its own ([%s](%s), profile `%s`, `BENCH_PARTS=scale make bench`): commit `%s`, %s, %s; brokers: %s, heap %s; load average %s at the start, %s at the end (other work on the machine shows here).",
				run.Path, run.Path, res.Profile.Name, m.Commit, m.Date, (time.Duration(res.Seconds) * time.Second).String(), brokersText(res.Brokers),
				heapText(res.Scale), m.LoadAtStart, m.LoadAtEnd)
		}
		if n := len(res.WarmupSourceMicros); n > 0 {
			then := ""
			if len(res.Contenders) > 1 {
				then = ", then once with " + res.Contenders[1].Label
			}
			p(" Before its first depth the brokers were warmed up (not measured) by %s of %s x 1 KiB with our relay, until the source's CPU per message settled%s.",
				plural(n, "move"), groupThousands(int64(res.Profile.WarmupCount)), then)
		}
		if !res.Complete {
			p(" **Incomplete run**: it stopped early (%s); the depths that ran are shown.", oneLine(res.Error))
		}
		p("\n\n")
		for _, pt := range res.Scale.Points {
			rows = append(rows, scaleRow{ScalePoint: pt, heap: heapText(res.Scale)})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Case.Count < rows[j].Case.Count })

	p("One queue of 1 KiB messages at each depth, filled once by Artemis's CLI producer over Core; our relay copies it (`Engine.Copy`, recording in its ledger) to a target queue, and then moves the same queue (`Engine.Move`) to another: a copy leaves the source as it was, so one fill serves both. ")
	p("Each run is checked for loss and doubles: the copy's target is consumed (every message of the fill once, nothing else), the source must still count the whole fill and no staging may be left; that target is then removed, and the move's target is consumed the same way, with nothing left on the source, which also shows that the copy left every message of the source in place. ")
	p("One run per depth. msg/s is the depth over the relay child's wall time (process start to exit, checks not included); peak RSS is the child's VmHWM. ")
	p("A queue deeper than a broker's memory for messages (its global-max-size: by default half its heap) is paged to disk, as on an operator's broker: the column *source paged* says whether the filled source was paging.\n\n")
	p("| messages | broker heap; paging | fill msg/s | source paged | move msg/s | copy msg/s | move peak RSS MiB | copy peak RSS MiB | checks s (copy, move) | correct (move, copy) |\n")
	p("|---:|---:|---:|:---:|---:|---:|---:|---:|---:|:---:|\n")
	var failed []string
	for _, row := range rows {
		pt := row.ScalePoint
		moveRate, moveRSS, moveOK := trialCells(pt.Move)
		copyRate, copyRSS, copyOK := trialCells(pt.Copy)
		paged := "no"
		if pt.SourcePaging {
			paged = "yes"
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %.0f, %.0f | %s, %s |\n", groupThousands(int64(pt.Case.Count)), row.heap, num(pt.Fill.MsgsPerSec), paged,
			moveRate, copyRate, moveRSS, copyRSS, pt.CopyCheckSeconds, pt.MoveCheckSeconds, moveOK, copyOK)
		for _, t := range []*Trial{pt.Copy, pt.Move} {
			if t != nil && !t.OK {
				failed = append(failed, fmt.Sprintf("- %s, heap %s, %s: %s", pt.Name, row.heap, t.Contender, headAndTail(t.Error)))
			}
		}
		if pt.Refilled {
			failed = append(failed, fmt.Sprintf("- %s, heap %s: the copy failed, so the move took a fresh fill", pt.Name, row.heap))
		}
		for _, e := range pt.BrokerErrors {
			failed = append(failed, fmt.Sprintf("- %s, heap %s: %s", pt.Name, row.heap, e))
		}
	}
	p("\n")
	if s := scaleComparison(rows); s != "" {
		p("%s\n\n", s)
	}
	if len(failed) > 0 {
		p("Runs that failed or were refused, and what the brokers logged:\n\n%s\n\n", strings.Join(failed, "\n"))
	}
}

// heapText is the brokers' heap of a run and the memory they give messages before paging: one
// value when both brokers have it. Runs written before the heap was recorded ran on the test
// environment's brokers, which all had 1G then.
func heapText(sc *ScaleCurve) string {
	one := func(heap, global string) string {
		if heap == "" {
			heap = "1G"
		}
		if global == "" {
			global = "half (default)"
		}
		return heap + "; pages beyond " + global
	}
	src, tgt := one(sc.SourceHeap, sc.SourceGlobalMaxSize), one(sc.TargetHeap, sc.TargetGlobalMaxSize)
	if src == tgt {
		return src
	}
	return fmt.Sprintf("%s source, %s target", src, tgt)
}

// trialCells are a run's rate, peak RSS and correctness as table cells; dashes when it did not run.
func trialCells(t *Trial) (rate, rss, ok string) {
	switch {
	case t == nil:
		return "–", "–", "–"
	case refusedBeforeMoving(t):
		// Preflight said no, with its figures (listed under the table), and nothing moved: the
		// outcome asked of a selection the target cannot take, not a failure.
		return "refused", "–", "nothing moved"
	case !t.OK:
		return "**FAILED**", "–", "**no**"
	}
	return num(t.MsgsPerSec), fmt.Sprintf("%.1f", float64(t.Process.PeakRSSKiB)/1024), "yes"
}

// refusedBeforeMoving reports whether a run was refused by the engine's checks before anything
// moved, and the target holds none of its messages.
func refusedBeforeMoving(t *Trial) bool {
	return !t.OK && strings.Contains(t.Error, "the transfer is refused before anything moved") && t.Check.TargetCount == 0 && t.Check.Received == 0
}

// scaleComparison says how the deepest correct depth's rates and peak memory compare with the
// two shallowest ones': one sentence per contender, empty when fewer than two depths are correct.
func scaleComparison(rows []scaleRow) string {
	var out []string
	for _, side := range []struct {
		what string
		of   func(scaleRow) *Trial
	}{{"move", func(r scaleRow) *Trial { return r.Move }}, {"copy", func(r scaleRow) *Trial { return r.Copy }}} {
		var ok []scaleRow
		for _, r := range rows {
			if t := side.of(r); t != nil && t.OK {
				ok = append(ok, r)
			}
		}
		if len(ok) < 2 {
			continue
		}
		deep := ok[len(ok)-1]
		dt := side.of(deep)
		// The brokers are named only where they differ from the deepest depth's.
		deepHeap := ""
		var vs []string
		for _, r := range ok[:min(2, len(ok)-1)] {
			heap := ""
			if r.heap != deep.heap {
				heap, deepHeap = ", heap "+r.heap, " (heap "+deep.heap+")"
			}
			vs = append(vs, fmt.Sprintf("%.0f%% of its rate at %s (%s msg/s%s)", 100*dt.MsgsPerSec/side.of(r).MsgsPerSec,
				groupThousands(int64(r.Case.Count)), num(side.of(r).MsgsPerSec), heap))
		}
		lo, hi := dt.Process.PeakRSSKiB, dt.Process.PeakRSSKiB
		for _, r := range ok {
			lo, hi = min(lo, side.of(r).Process.PeakRSSKiB), max(hi, side.of(r).Process.PeakRSSKiB)
		}
		out = append(out, fmt.Sprintf("At %s%s our %s ran at %s msg/s: %s. Its peak RSS stayed between %.1f and %.1f MiB over the depths (%.1f MiB at %s).",
			groupThousands(int64(deep.Case.Count)), deepHeap, side.what, num(dt.MsgsPerSec), strings.Join(vs, " and "),
			float64(lo)/1024, float64(hi)/1024, float64(dt.Process.PeakRSSKiB)/1024, groupThousands(int64(deep.Case.Count))))
	}
	return strings.Join(out, " ")
}

// headAndTail bounds an error for the page, as oneLine does, but keeps its end too: a relay's
// error says what it did first and what stopped it last.
func headAndTail(s string) string {
	const keep = 300
	r := []rune(strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "/"))
	if len(r) > 2*keep {
		return string(r[:keep]) + " … " + string(r[len(r)-keep:])
	}
	return string(r)
}
