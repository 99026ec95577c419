package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// ResumeResult is how fast a killed move picks up again: each run moves a Core-filled queue,
// kills the process that relays (SIGKILL) a quarter of the way through, and resumes the run in a
// new process, timing its first relayed batch; once with our engine alone (a child process,
// Engine.Resume) and, when the provider is built, once with `terraform apply` (the provider
// killed, the next apply resuming).
type ResumeResult struct {
	Count int         `json:"count"`
	Runs  []ResumeRun `json:"runs"`
}

// Ways a run is resumed.
const (
	ResumeViaEngine = "engine"
	ResumeViaApply  = "terraform apply"
)

// ResumeRun is one kill and resume.
type ResumeRun struct {
	Rep int    `json:"rep"`
	Via string `json:"via"` // ResumeViaEngine or ResumeViaApply
	// KilledAt is the relayed count (engine) or the target's message count (apply) at which
	// the first process was killed.
	KilledAt int64 `json:"killed_at"`
	// FirstRelayedSeconds is, for the engine, from the Resume call to its first batch the
	// target confirmed; for terraform apply, from the second apply's start to the first message
	// that reached the target after it (the target's count, polled every 50 ms).
	// ProcessSeconds is the whole second process, start to exit.
	FirstRelayedSeconds float64 `json:"first_relayed_s"`
	ProcessSeconds      float64 `json:"process_s"`
	Check               Check   `json:"check"`
	OK                  bool    `json:"ok"`
	Error               string  `json:"error,omitempty"`
}

// Stats are the median and slowest FirstRelayedSeconds of the correct runs resumed via, and how
// many of how many runs were correct.
func (r *ResumeResult) Stats(via string) (median, slowest float64, ok, runs int) {
	var firsts []float64
	for _, run := range r.Runs {
		if run.Via != via {
			continue
		}
		runs++
		if run.OK {
			ok++
			firsts = append(firsts, run.FirstRelayedSeconds)
			slowest = max(slowest, run.FirstRelayedSeconds)
		}
	}
	return Median(firsts), slowest, ok, runs
}

// measureResume kills and resumes a move of n x 1 KiB once per repetition of the profile, with
// the engine and with terraform apply in turn.
func (b *bench) measureResume(ctx context.Context, n int) *ResumeResult {
	rr := &ResumeResult{Count: n}
	vias := []string{ResumeViaEngine}
	if b.cfg.ProviderDir != "" {
		vias = append(vias, ResumeViaApply)
	}
	for rep := 1; rep <= b.cfg.Profile.Reps && ctx.Err() == nil; rep++ {
		for _, via := range vias {
			run := b.resumeOnce(ctx, n, rep, via)
			if run.OK {
				b.logf("resume rep %d via %s: killed at %d; the resumed run's first batch %.2f s after it started (second process %.2f s), ok",
					rep, via, run.KilledAt, run.FirstRelayedSeconds, run.ProcessSeconds)
			} else {
				b.logf("resume rep %d via %s: FAILED: %s", rep, via, run.Error)
			}
			rr.Runs = append(rr.Runs, run)
		}
	}
	return rr
}

func (b *bench) resumeOnce(ctx context.Context, n, rep int, via string) ResumeRun {
	run := ResumeRun{Rep: rep, Via: via, KilledAt: max(1, int64(n/4))}
	fail := func(err error) ResumeRun { run.Error = err.Error(); return run }
	c := Case{Count: n, Size: kib, Producer: ProducerCore}
	id := "resume-engine"
	if via == ResumeViaApply {
		id = "resume-apply"
	}
	srcQ, tgtQ, tag := b.queueNames(c, Contender{ID: id}, rep)
	if err := b.createRunQueues(ctx, srcQ, tgtQ); err != nil {
		return fail(err)
	}
	defer b.dropQueues(ctx, srcQ, tgtQ)
	if _, err := b.fill(ctx, c, srcQ, tag); err != nil {
		return fail(err)
	}
	spec := transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "source", Queue: srcQ},
		Target: transfer.Endpoint{Broker: "target", Queue: tgtQ}}
	defer b.removeStaging(ctx, spec)
	var err error
	if via == ResumeViaApply {
		err = b.resumeByApply(ctx, spec, c, &run)
	} else {
		err = b.resumeByEngine(ctx, spec, c, &run)
	}
	check, verr := Verify(ctx, b.srcAdmin, b.tgtAdmin, srcQ, tgtQ, n, kib, tag, stagingPrefixOf(spec))
	run.Check = check
	switch {
	case err != nil:
		return fail(fmt.Errorf("%w (check: %s)", err, orOK(check.Problem)))
	case verr != nil:
		return fail(fmt.Errorf("checking the resumed run: %w", verr))
	case !check.OK:
		return fail(errors.New("lost or doubled messages: " + check.Problem))
	case run.FirstRelayedSeconds <= 0:
		return fail(errors.New("the resumed run relayed nothing that was seen"))
	}
	run.OK = true
	return run
}

// resumeByEngine moves spec in a relay child that kills itself at run.KilledAt relayed, then
// resumes the run it left in a new child.
func (b *bench) resumeByEngine(ctx context.Context, spec transfer.Spec, c Case, run *ResumeRun) error {
	plan := relayPlan{Source: b.srcAccess, Target: b.tgtAccess, Spec: spec, Tuning: b.cfg.RelayTuning, Timeout: runTimeout(c), KillAtRelayed: run.KilledAt}
	if _, _, err := runRelayPlan(ctx, plan, b.cfg.Log); err == nil {
		return errors.New("the first relay process finished instead of being killed")
	}
	runID, err := b.unfinishedRunID(ctx, spec)
	if err != nil {
		return err
	}
	plan.KillAtRelayed, plan.ResumeRunID = 0, runID
	pr, child, err := runRelayPlan(ctx, plan, b.cfg.Log)
	run.ProcessSeconds, run.FirstRelayedSeconds = pr.WallSeconds, child.Times.FirstRelayed
	if err != nil {
		return fmt.Errorf("resuming run %s: %w", runID, err)
	}
	return nil
}

// resumePoll is how often the target's count is read while an apply is watched.
const resumePoll = 50 * time.Millisecond

// resumeByApply runs `terraform apply` of spec, kills its provider (SIGKILL) once the target
// holds run.KilledAt messages, and applies again in the same folder, timing the first message
// that reaches the target after the second apply started.
func (b *bench) resumeByApply(ctx context.Context, spec transfer.Spec, c Case, run *ResumeRun) error {
	timeout := runTimeout(c)
	ws, err := b.workspace(spec, b.cfg.ProviderDir, timeout)
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws.Dir)
	count := func() int64 {
		q, err := b.tgtAdmin.Queue(ctx, spec.Target.Queue)
		if err != nil {
			return -1
		}
		return q.MessageCount
	}
	// watch calls found every resumePoll until it says so or the apply ends.
	watch := func(found func(start time.Time, provider func() int) bool) func(time.Time, func() int, <-chan struct{}) {
		return func(start time.Time, provider func() int, ended <-chan struct{}) {
			t := time.NewTicker(resumePoll)
			defer t.Stop()
			for !found(start, provider) {
				select {
				case <-ended:
					return
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}
	}
	killed := false
	_, err = b.runApply(ctx, ws, timeout, watch(func(_ time.Time, provider func() int) bool {
		if pid := provider(); pid > 0 && count() >= run.KilledAt {
			killed = syscall.Kill(pid, syscall.SIGKILL) == nil
			return true
		}
		return false
	}))
	switch {
	case !killed && err == nil:
		return fmt.Errorf("the first apply finished before the target held %d messages, where its provider was to be killed", run.KilledAt)
	case !killed:
		return fmt.Errorf("the first apply's provider was not killed: %w", err)
	}
	before := count()
	var first time.Duration
	pr, err := b.runApply(ctx, ws, timeout, watch(func(start time.Time, _ func() int) bool {
		if count() > before {
			first = time.Since(start)
			return true
		}
		return false
	}))
	run.ProcessSeconds, run.FirstRelayedSeconds = pr.WallSeconds, first.Seconds()
	if err != nil {
		return fmt.Errorf("the second apply: %w", err)
	}
	return nil
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
