package bench

import (
	"fmt"
	"strings"
)

// withSeparateCopy replaces the copy goals that this run did not measure with what the
// separate copy run measured, saying so.
func withSeparateCopy(targets []Target, cp *Results) []Target {
	out := append([]Target(nil), targets...)
	for i, t := range out {
		if t.Status != statusNotMeasured {
			continue
		}
		for _, c := range cp.Targets {
			if c.Goal == t.Goal && c.Status != statusNotMeasured {
				c.Measured = fmt.Sprintf("%s, in the separate run of our move and copy (commit `%s`, Copy beside move)", c.Measured, cp.Machine.Commit)
				out[i] = c
			}
		}
	}
	return out
}

// hasCopy says whether res holds a run of our copy.
func hasCopy(res *Results) bool {
	for i := range res.Cases {
		if s := res.Cases[i].summary(ContenderCopy); s != nil && s.Runs > 0 {
			return true
		}
	}
	return false
}

// writeCopy sets our copy beside our move, case by case, with issue #12's goals: at least
// goalCopyVsMove of the move's rate, and a peak RSS below goalRSSMiB. from, when set, says
// that res is a separate run (a results file of its own), whose commit, date and load are given.
func writeCopy(b *strings.Builder, res *Results, from string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Copy beside move\n\n")
	if from != "" {
		m := res.Machine
		p("From a separate run of our move and our copy only ([%s](%s), profile `%s`, %s each, alternating): commit `%s`, %s, brokers: %s; load average %s at the start, %s at the end (other work on the machine shows here). ",
			from, from, res.Profile.Name, plural(res.Profile.Reps, "repetition"), m.Commit, m.Date, brokersText(res.Brokers), m.LoadAtStart, m.LoadAtEnd)
	}
	p("Our relay copying (`Engine.Copy`, recording what it copied in a ledger database of its own on the environment's PostgreSQL) and moving (`Engine.Move`) the same case on the same brokers, in the same kind of child process, taking turns. Goals (issue #12): a copy at least %.0f%% of the move's rate for %s, and its peak RSS below %.0f MiB. Medians of the correct runs; peak RSS is the child's VmHWM.\n\n",
		goalCopyVsMove*100, Case{Count: goalCase, Size: kib}.Name(), goalRSSMiB)
	p("| case | move msg/s | copy msg/s | copy / move | copy peak RSS MiB (median, highest) | correct runs, move / copy |\n|---|---:|---:|---:|---:|---:|\n")
	for i := range res.Cases {
		cr := &res.Cases[i]
		ours, cp := cr.summary(ContenderOurs), cr.summary(ContenderCopy)
		if cp == nil || cp.Runs == 0 {
			continue
		}
		move, moveRuns, ratio := "–", "–", "–"
		if ours != nil {
			moveRuns = fmt.Sprintf("%d/%d", ours.OKRuns, ours.Runs)
			if ours.OKRuns > 0 {
				move = num(ours.MsgsPerSec)
			}
		}
		if cr.Ratios.CopyVsMove > 0 {
			ratio = fmt.Sprintf("%.0f%%", 100*cr.Ratios.CopyVsMove)
		}
		copyRate, rss := "**FAILED**", "–"
		if cp.OKRuns > 0 {
			copyRate, rss = num(cp.MsgsPerSec), fmt.Sprintf("%.1f, %.1f", cp.PeakRSSMiB, cp.MaxRSSMiB)
		}
		p("| %s | %s | %s | %s | %s | %s / %d/%d |\n", cr.Name, move, copyRate, ratio, rss, moveRuns, cp.OKRuns, cp.Runs)
	}
	p("\n")
	if from != "" {
		for _, t := range res.Targets {
			if strings.HasPrefix(t.Goal, "copy ") || strings.HasPrefix(t.Goal, "peak RSS of a copy") {
				p("- %s: %s, **%s**\n", t.Goal, t.Measured, t.Status)
			}
		}
		p("\n")
	}
}
