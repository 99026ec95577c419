package core

import (
	"context"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// StagingProbe is what a move's staging canary found: the calls on a staging queue the source
// broker refused its user, or the error that stopped the canary.
type StagingProbe struct {
	Problems []preflight.PermissionProblem
	Err      error
}

// passed reports whether the canary found every call allowed.
func (p StagingProbe) passed() bool { return p.Err == nil && len(p.Problems) == 0 }

// StagingProbes shares a move's staging canary (every call a run makes on its staging queues,
// made on empty canary queues of the source: 17 management requests, six of them journal
// writes) between the moves of one process, so that the moves of one apply from the same source
// broker prove it once. Its answer depends on the source broker and the user's permissions, not
// on the queue moved: it is keyed by the broker's name and node id, the user being the one the
// process has for that broker. Only a canary that found every call allowed is reused, for
// probeReuseWindow (permissions the broker's administrator changes meanwhile show at the first
// call of a run that they refuse); one that found a refusal or failed is not, so the next move
// probes again. Moves that ask while a canary is out wait for it and take its answer. The zero
// value is ready to use, and it is safe for concurrent use.
type StagingProbes struct {
	// now is time.Now unless a test sets it.
	now    func() time.Time
	shared sharedOutcomes[StagingProbe]
}

func (p *StagingProbes) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// Outcome returns the staging canary's answer for the source broker sourceKey: one that passed
// within probeReuseWindow, the one being made now (waiting for it), or a new one from probe. A
// nil StagingProbes shares nothing: probe runs every time.
func (p *StagingProbes) Outcome(ctx context.Context, sourceKey string, probe func(context.Context) StagingProbe) StagingProbe {
	if p == nil {
		return probe(ctx)
	}
	holds := func(result StagingProbe, madeAt, now time.Time) bool {
		return result.passed() && now.Sub(madeAt) < probeReuseWindow
	}
	result, err := p.shared.get(ctx, sourceKey, p.clock, holds, probe)
	if err != nil {
		return StagingProbe{Err: err}
	}
	return result
}
