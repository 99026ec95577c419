package bench

import (
	"fmt"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// The goals on synced brokers, as operators run them (set in issue #15).
const (
	goalApplyVsDefault  = 1.0  // a whole terraform apply at least as fast as artemis transfer
	goalSourceCPUVsDflt = 2.0  // the source broker's CPU per message at most twice artemis transfer's
	goalMillionVsGoal   = 0.80 // a million messages at least 80% of the 100,000 rate
	goalLargeRSSOver    = 32.0 // MiB above max_in_flight_bytes, for 20 x 10 MiB
	goalResumeSecs      = 2.0  // a resumed run's first relayed batch
)

// goalCaseOf is the case the throughput goals are stated for: 100,000 x 1 KiB, the Core fill
// when the profile fills it more than one way (issue #15 states its goals for the Core fill).
func goalCaseOf(cases []CaseResult) *CaseResult {
	var found *CaseResult
	for i := range cases {
		c := &cases[i]
		if c.Count != goalCase || c.Size != kib {
			continue
		}
		if found == nil || (c.Producer == ProducerCore && found.Producer != ProducerCore) {
			found = c
		}
	}
	return found
}

// caseOf is the first case of count x size, nil when there is none.
func caseOf(cases []CaseResult, count, size int) *CaseResult {
	for i := range cases {
		if cases[i].Count == count && cases[i].Size == size {
			return &cases[i]
		}
	}
	return nil
}

// okSummary is a contender's summary of a case when it has a correct run, else nil.
func okSummary(cr *CaseResult, id string) *ContenderSummary {
	if cr == nil {
		return nil
	}
	if s := cr.summary(id); s != nil && s.OKRuns > 0 {
		return s
	}
	return nil
}

// syncedTargets states issue #15's goals: the whole apply against artemis transfer, the source
// broker's CPU against artemis transfer's, the rate at a million messages, the large-message
// memory bound and the resume's first batch.
func syncedTargets(res *Results) []Target {
	gc := goalCaseOf(res.Cases)
	gname := Case{Count: goalCase, Size: kib, Producer: ProducerCore}.Name()
	if gc != nil {
		gname = gc.Name
	}
	ours, apply, dflt := okSummary(gc, ContenderOurs), okSummary(gc, ContenderApply), okSummary(gc, ContenderCoreDflt)
	var targets []Target

	t := Target{Goal: fmt.Sprintf("whole `terraform apply` (%s) at least %.1fx `artemis transfer` (core, default commit)", gname, goalApplyVsDefault)}
	switch {
	case gc == nil || gc.summary(ContenderApply) == nil:
		t.Status, t.Measured = statusNotMeasured, "no terraform apply of "+gname+" in this run"
	case apply == nil || dflt == nil:
		t.Status, t.Measured = statusFailed, "no correct run of ours (terraform apply) or of artemis transfer"
	default:
		r := apply.MsgsPerSec / dflt.MsgsPerSec
		t.Measured = fmt.Sprintf("%.2fx (%.0f vs %.0f msg/s)", r, apply.MsgsPerSec, dflt.MsgsPerSec)
		if ours != nil {
			t.Measured += fmt.Sprintf("; the engine alone %.2fx (%.0f msg/s)", ours.MsgsPerSec/dflt.MsgsPerSec, ours.MsgsPerSec)
		}
		if base := okSummary(gc, ContenderApplyBase); base != nil {
			t.Measured += fmt.Sprintf("; at %s, in the same run, %.2fx (%.0f msg/s)", orUnknown(res.BaselineRev), base.MsgsPerSec/dflt.MsgsPerSec, base.MsgsPerSec)
		}
		t.Status = metOrMissed(r >= goalApplyVsDefault)
	}
	targets = append(targets, t)

	t = Target{Goal: fmt.Sprintf("source broker CPU per message of our move (%s) at most %.0fx `artemis transfer`'s", gname, goalSourceCPUVsDflt)}
	switch {
	case gc == nil:
		t.Status, t.Measured = statusNotMeasured, "this profile has no "+gname+" case"
	case ours == nil || dflt == nil || dflt.SourceCPU <= 0:
		t.Status, t.Measured = statusFailed, "no correct run of ours or of artemis transfer"
	default:
		per := func(sec float64) float64 { return sec * 1e6 / float64(gc.Count) }
		r := ours.SourceCPU / dflt.SourceCPU
		t.Measured = fmt.Sprintf("%.2fx (%.0f vs %.0f µs/msg)", r, per(ours.SourceCPU), per(dflt.SourceCPU))
		t.Status = metOrMissed(r <= goalSourceCPUVsDflt)
	}
	targets = append(targets, t)

	t = Target{Goal: fmt.Sprintf("our move of 1,000,000 x 1 KiB at least %.0f%% of the rate at %s", goalMillionVsGoal*100, gname)}
	mc := caseOf(res.Cases, 1_000_000, kib)
	mOurs := okSummary(mc, ContenderOurs)
	switch {
	case mc == nil:
		t.Status, t.Measured = statusNotMeasured, "this profile has no 1,000,000 x 1 KiB case"
	case mOurs == nil || ours == nil:
		t.Status, t.Measured = statusFailed, "no correct run of ours at one of the two sizes"
	default:
		r := mOurs.MsgsPerSec / ours.MsgsPerSec
		t.Measured = fmt.Sprintf("%.0f%% (%.0f vs %.0f msg/s, %s)", 100*r, mOurs.MsgsPerSec, ours.MsgsPerSec, mc.Name)
		if md := okSummary(mc, ContenderCoreDflt); md != nil && dflt != nil {
			t.Measured += fmt.Sprintf("; artemis transfer %.0f%% (%.0f vs %.0f msg/s)", 100*md.MsgsPerSec/dflt.MsgsPerSec, md.MsgsPerSec, dflt.MsgsPerSec)
		}
		t.Status = metOrMissed(r >= goalMillionVsGoal)
	}
	targets = append(targets, t)

	inFlight := res.RelayTuning.MaxInFlightBytes
	if inFlight <= 0 {
		inFlight = transfer.DefaultMaxInFlightBytes
	}
	bound := float64(inFlight)/float64(mib) + goalLargeRSSOver
	t = Target{Goal: fmt.Sprintf("peak RSS of a move of 20 x 10 MiB within max_in_flight_bytes + %.0f MiB (%.0f MiB)", goalLargeRSSOver, bound)}
	lc := caseOf(res.Cases, 20, 10*mib)
	if lc == nil {
		t.Status, t.Measured = statusNotMeasured, "this profile has no 20 x 10 MiB case"
	} else {
		worst, parts := 0.0, ""
		for _, id := range []string{ContenderOurs, ContenderApply} {
			if s := okSummary(lc, id); s != nil {
				worst = max(worst, s.MaxRSSMiB)
				if parts != "" {
					parts += ", "
				}
				who := "engine"
				if id == ContenderApply {
					who = "provider in terraform apply"
				}
				parts += fmt.Sprintf("%s highest %.1f MiB over %s", who, s.MaxRSSMiB, plural(s.OKRuns, "run"))
			}
		}
		if parts == "" {
			t.Status, t.Measured = statusFailed, "no correct run of ours"
		} else {
			if m := medianMemory(lc.Runs, ContenderOurs); m.nHeld > 0 {
				held := m.receive + m.decoded + m.send
				parts += fmt.Sprintf("; go-amqp holds each message %.1f times over (%.1f MiB, see the memory of our move)", held/(float64(lc.Size)/float64(mib)), held)
			}
			t.Measured = parts
			t.Status = metOrMissed(worst <= bound)
		}
	}
	targets = append(targets, t)

	// The goal is stated for the apply; without the provider built, the engine's resume stands in,
	// and the goal says so.
	via, from := ResumeViaApply, "of the apply starting"
	if r := res.Resume; r != nil {
		if _, _, _, n := r.Stats(ResumeViaApply); n == 0 {
			via, from = ResumeViaEngine, "of the Resume call (engine alone)"
		}
	}
	t = Target{Goal: fmt.Sprintf("a move killed mid-relay (SIGKILL) and resumed relays its first batch within %.0f s %s", goalResumeSecs, from)}
	switch r := res.Resume; {
	case r == nil || len(r.Runs) == 0:
		t.Status, t.Measured = statusNotMeasured, "no resume in this run"
	default:
		median, slowest, ok, runs := r.Stats(via)
		if ok == 0 {
			t.Status, t.Measured = statusFailed, "no correct resumed run via "+via
			break
		}
		t.Measured = fmt.Sprintf("%s: median %.2f s, slowest %.2f s over %s of %s x 1 KiB", via, median, slowest, plural(ok, "correct run"), groupThousands(int64(r.Count)))
		if ok < runs {
			t.Measured += fmt.Sprintf(" (%d failed)", runs-ok)
		}
		if via == ResumeViaApply {
			if em, es, eok, _ := r.Stats(ResumeViaEngine); eok > 0 {
				t.Measured += fmt.Sprintf("; the engine alone, from the Resume call: median %.2f s, slowest %.2f s", em, es)
			}
		}
		t.Status = metOrMissed(slowest < goalResumeSecs && ok == runs)
	}
	return append(targets, t)
}
