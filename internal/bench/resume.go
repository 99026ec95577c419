package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// ResumeResult is how fast a killed move picks up again: each run moves a Core-filled queue
// with our relay, kills the relay (SIGKILL) a quarter of the way through, and resumes the run in
// a new process, timing its first relayed batch.
type ResumeResult struct {
	Count int         `json:"count"`
	Runs  []ResumeRun `json:"runs"`
	// MedianFirstRelayed is the median FirstRelayedSeconds of the correct runs.
	MedianFirstRelayed float64 `json:"median_first_relayed_s"`
	OKRuns             int     `json:"ok_runs"`
}

// ResumeRun is one kill and resume.
type ResumeRun struct {
	Rep int `json:"rep"`
	// KilledAt is the relayed count at which the first process killed itself.
	KilledAt int64 `json:"killed_at"`
	// FirstRelayedSeconds is from the Resume call to its first batch the target confirmed;
	// ProcessSeconds is the whole second process, start to exit.
	FirstRelayedSeconds float64 `json:"first_relayed_s"`
	ProcessSeconds      float64 `json:"process_s"`
	Check               Check   `json:"check"`
	OK                  bool    `json:"ok"`
	Error               string  `json:"error,omitempty"`
}

// measureResume kills and resumes a move of n x 1 KiB once per repetition of the profile.
func (b *bench) measureResume(ctx context.Context, n int) *ResumeResult {
	rr := &ResumeResult{Count: n}
	var firsts []float64
	for rep := 1; rep <= b.cfg.Profile.Reps && ctx.Err() == nil; rep++ {
		run := b.resumeOnce(ctx, n, rep)
		if run.OK {
			firsts = append(firsts, run.FirstRelayedSeconds)
			rr.OKRuns++
			b.logf("resume rep %d: killed at %d relayed; the resumed run's first batch confirmed %.2f s after Resume was called (process %.2f s), ok",
				rep, run.KilledAt, run.FirstRelayedSeconds, run.ProcessSeconds)
		} else {
			b.logf("resume rep %d: FAILED: %s", rep, run.Error)
		}
		rr.Runs = append(rr.Runs, run)
	}
	rr.MedianFirstRelayed = Median(firsts)
	return rr
}

func (b *bench) resumeOnce(ctx context.Context, n, rep int) ResumeRun {
	run := ResumeRun{Rep: rep, KilledAt: max(1, int64(n/4))}
	fail := func(err error) ResumeRun { run.Error = err.Error(); return run }
	c := Case{Count: n, Size: kib, Producer: ProducerCore}
	srcQ, tgtQ, tag := b.queueNames(c, Contender{ID: "resume"}, rep)
	for _, q := range []struct {
		c    *artemis.Client
		name string
	}{{b.srcAdmin, srcQ}, {b.tgtAdmin, tgtQ}} {
		if err := q.c.CreateQueue(ctx, artemis.QueueSpec{Name: q.name, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
			return fail(err)
		}
	}
	defer b.dropQueues(ctx, srcQ, tgtQ)
	if _, err := b.fill(ctx, c, srcQ, tag); err != nil {
		return fail(err)
	}
	spec := transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "source", Queue: srcQ},
		Target: transfer.Endpoint{Broker: "target", Queue: tgtQ}}
	defer b.removeStaging(ctx, spec)
	plan := relayPlan{Source: b.srcAccess, Target: b.tgtAccess, Spec: spec, Tuning: b.cfg.RelayTuning, Timeout: runTimeout(c), KillAtRelayed: run.KilledAt}
	if _, _, err := runRelayPlan(ctx, plan, b.cfg.Log); err == nil {
		return fail(errors.New("the first relay process finished instead of being killed"))
	}
	runID, err := b.unfinishedRunID(ctx, spec)
	if err != nil {
		return fail(err)
	}
	plan.KillAtRelayed, plan.ResumeRunID = 0, runID
	pr, child, err := runRelayPlan(ctx, plan, b.cfg.Log)
	run.ProcessSeconds, run.FirstRelayedSeconds = pr.WallSeconds, child.Times.FirstRelayed
	check, verr := Verify(ctx, b.srcAdmin, b.tgtAdmin, srcQ, tgtQ, n, kib, tag, stagingPrefixOf(spec))
	run.Check = check
	switch {
	case err != nil:
		return fail(fmt.Errorf("resuming run %s: %w (check: %s)", runID, err, orOK(check.Problem)))
	case verr != nil:
		return fail(fmt.Errorf("checking the resumed run: %w", verr))
	case !check.OK:
		return fail(errors.New("lost or doubled messages: " + check.Problem))
	case run.FirstRelayedSeconds <= 0:
		return fail(errors.New("the resumed run reported no relayed batch"))
	}
	run.OK = true
	return run
}

// unfinishedRunID finds the run a killed relay left: the staging queue of spec that has a
// manifest queue beside it.
func (b *bench) unfinishedRunID(ctx context.Context, spec transfer.Spec) (string, error) {
	queues, err := b.srcAdmin.ListQueues(ctx, stagingPrefixOf(spec))
	if err != nil {
		return "", fmt.Errorf("looking for the killed run's staging: %w", err)
	}
	names := map[string]bool{}
	for _, q := range queues {
		names[q.Name] = true
	}
	for _, q := range queues {
		id := strings.TrimPrefix(q.Name, transfer.StagingPrefix)
		if names[transfer.ManifestQueue(id)] {
			return id, nil
		}
	}
	return "", fmt.Errorf("the killed relay left no staging queue with a manifest (found %d queues)", len(queues))
}
