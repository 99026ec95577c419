package faults

// The kinds whose iteration is more than one apply with one fault: a reference apply that
// times the whole apply for the kinds that land anytime, two applies of one copy at once, and
// a return applied while the next apply resumes the run.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// reference times a clean apply of a move of plan.Count messages on queues of its own, as the
// iteration's apply will run: the kinds that land anytime draw their instant over it. The
// reference is checked too: the target must hold every message.
func (h *runner) reference(ctx context.Context, index int, plan Plan) (time.Duration, error) {
	src, tgt := h.admin[brSource], h.admin[brTarget]
	srcQueue, tgtQueue := testenv.UniqueName("faults.ref-src"), testenv.UniqueName("faults.ref-tgt")
	setupCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := src.CreateQueue(setupCtx, artemis.QueueSpec{Name: srcQueue, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
		return 0, fmt.Errorf("creating the reference's source queue: %w", err)
	}
	if err := tgt.CreateQueue(setupCtx, artemis.QueueSpec{Name: tgtQueue, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
		return 0, fmt.Errorf("creating the reference's target queue: %w", err)
	}
	defer h.cleanUp(srcQueue, tgtQueue, []*artemis.Client{tgt}, false)
	if _, err := harness.Fill(setupCtx, src, srcQueue, plan.Count, MessageSize, fmt.Sprintf("r%d", plan.Seed)); err != nil {
		return 0, err
	}
	ws, err := h.workspace(h.iterationDir(index, plan, "reference"), plan, srcQueue, tgtQueue)
	if err != nil {
		return 0, err
	}
	apply, err := ws.StartApply(ctx, h.cfg.ApplyTimeout+time.Minute)
	if err != nil {
		return 0, err
	}
	if err := waitApply(apply); err != nil {
		return 0, err
	}
	q, err := tgt.Queue(setupCtx, tgtQueue)
	if err != nil {
		return 0, fmt.Errorf("counting the reference's target queue: %w", err)
	}
	if q.MessageCount != int64(plan.Count) {
		return 0, fmt.Errorf("the reference apply left %d of %d messages on its target", q.MessageCount, plan.Count)
	}
	return apply.Wall(), nil
}

// waitUntil waits until at, or until the apply ends or ctx does first; it reports whether at
// came while the apply still ran.
func waitUntil(ctx context.Context, apply *harness.Apply, at time.Time) bool {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		select {
		case <-apply.Done():
			return false
		default:
			return true
		}
	case <-apply.Done():
		return false
	case <-ctx.Done():
		return false
	}
}

// runTwo starts the apply of two working directories with one copy's configuration at the
// same moment, then lets each operator apply again, bounded, until theirs succeeds.
func (h *runner) runTwo(ctx context.Context, first, second *harness.Workspace, it *Iteration) {
	applyLimit := h.cfg.ApplyTimeout + time.Minute
	var wg sync.WaitGroup
	var mu sync.Mutex
	recovered := 0
	start := time.Now()
	for i, ws := range []*harness.Workspace{first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := Iteration{Plan: it.Plan, SourceQueue: it.SourceQueue, TargetQueue: it.TargetQueue}
			apply, err := ws.StartApply(ctx, applyLimit)
			if err != nil {
				mu.Lock()
				it.Notes = append(it.Notes, fmt.Sprintf("workspace %d: %v", i+1, err))
				mu.Unlock()
				return
			}
			own.Applies = 1
			err = h.reapply(ctx, ws, apply, waitApply(apply), applyLimit, &own)
			mu.Lock()
			defer mu.Unlock()
			it.Applies += own.Applies
			for _, n := range own.Notes {
				it.Notes = append(it.Notes, fmt.Sprintf("workspace %d: %s", i+1, n))
			}
			if err == nil {
				recovered++
			}
		}()
	}
	wg.Wait()
	it.Injected = true
	it.Recovered = recovered == 2
	if it.Recovered {
		it.RecoverySeconds = time.Since(start).Seconds()
	}
}

// runReturnDuringResume kills the provider of the first apply once the target holds
// plan.TriggerAt messages, then starts the next apply (which resumes the run) and, once it
// has relayed again, applies an artemis_transfer_return of the run beside it. Whatever either
// did, the transfer is then applied again until it succeeds.
func (h *runner) runReturnDuringResume(ctx context.Context, ws *harness.Workspace, index int, plan Plan, target *artemis.Client, it *Iteration) {
	applyLimit := h.cfg.ApplyTimeout + time.Minute
	apply, err := ws.StartApply(ctx, applyLimit)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	it.Applies = 1
	reached, n := h.waitForTrigger(ctx, apply, plan, target, it.TargetQueue)
	if !reached {
		it.Notes = append(it.Notes, fmt.Sprintf("the first apply ended before the target held %d messages: the fault was not injected", plan.TriggerAt))
		it.Recovered = h.reapply(ctx, ws, apply, waitApply(apply), applyLimit, it) == nil
		return
	}
	faultAt := time.Now()
	it.Injected, it.InjectedAt, it.InjectedTarget = true, faultAt.Sub(apply.Started()).Seconds(), n
	pid, err := apply.Provider(providerWait)
	if err == nil {
		err = harness.Kill(pid)
	}
	if err != nil {
		it.Notes = append(it.Notes, "killing the provider: "+err.Error())
	}
	_ = apply.Wait()
	runID, err := h.stagedRun(ctx)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	returnWS, err := h.returnWorkspace(index, plan, runID)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	resume, err := ws.StartApply(ctx, applyLimit)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	it.Applies++
	// The return lands once the resume has relayed again (or has ended): the two then race
	// for the run.
	h.waitForTrigger(ctx, resume, Plan{TriggerAt: int(n) + 1}, target, it.TargetQueue)
	ret, err := returnWS.StartApply(ctx, applyLimit)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	retErr := waitApply(ret)
	resumeErr := waitApply(resume)
	it.Notes = append(it.Notes, "resume: "+outcome(resumeErr, resume), "return: "+outcome(retErr, ret))
	if err := h.reapply(ctx, ws, resume, resumeErr, applyLimit, it); err != nil {
		return
	}
	it.Recovered = true
	it.RecoverySeconds = time.Since(faultAt).Seconds()
}

// outcome says how an apply ended, for the notes.
func outcome(err error, a *harness.Apply) string {
	if err == nil {
		return "succeeded"
	}
	return "failed: " + firstErrorLine(a.Output())
}

// stagedRun is the run whose staging queues the killed apply left on the source.
func (h *runner) stagedRun(ctx context.Context) (string, error) {
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	queues, err := h.admin[brSource].ListQueues(qctx, transfer.StagingPrefix)
	if err != nil {
		return "", fmt.Errorf("listing the staging queues the killed apply left: %w", err)
	}
	for _, q := range queues {
		name := strings.TrimPrefix(q.Name, transfer.StagingPrefix)
		if name == q.Name || strings.Contains(name, ".canary-") {
			continue
		}
		runID, _, _ := strings.Cut(name, ".")
		if _, _, err := transfer.ParseRunID(runID); err == nil {
			return runID, nil
		}
	}
	return "", fmt.Errorf("the killed apply left no run on the source (%d queues under %s)", len(queues), transfer.StagingPrefix)
}

// returnWorkspace writes the working directory of an artemis_transfer_return of runID.
func (h *runner) returnWorkspace(index int, plan Plan, runID string) (*harness.Workspace, error) {
	ws, err := h.workspace(h.iterationDir(index, plan, "return"), plan, "", "")
	if err != nil {
		return nil, err
	}
	tc := h.transferConfig(plan, "", "")
	tc.ReturnRunID = runID
	if err := harness.WriteWorkspace(ws.Dir, tc); err != nil {
		return nil, err
	}
	return ws, nil
}
