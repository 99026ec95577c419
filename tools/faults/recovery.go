package faults

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// run is the first apply with its fault, then the operator's recovery: apply again, up to
// MaxApplies in all.
func (h *runner) run(ctx context.Context, ws *harness.Workspace, plan Plan, target *artemis.Client, tally *Tally, it *Iteration) {
	// The apply is bounded by timeouts.create; the harness kills it a minute later if not.
	applyLimit := h.cfg.ApplyTimeout + time.Minute
	var pointEnv []string
	if plan.Kind == KillProviderAtPoint {
		// Only the first apply's provider dies at the point; the recovery's run as built.
		pointEnv = []string{"ARTEMIS_FAULT_POINT=" + plan.Point}
	}
	apply, err := ws.StartApply(ctx, applyLimit, pointEnv...)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	it.Applies = 1
	if plan.Kind == KillProviderAtPoint {
		h.runAtPoint(ctx, ws, apply, applyLimit, plan, it)
		return
	}
	var faultAt time.Time
	var f *fault
	background, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	var bg sync.WaitGroup
	defer bg.Wait()

	var reached bool
	var n int64
	if plan.Kind.Anytime() {
		// The instant is drawn over the reference apply's whole time, 0 included.
		at := time.Duration(plan.AtFraction * it.ReferenceSeconds * float64(time.Second))
		reached = waitUntil(ctx, apply, apply.Started().Add(at))
	} else {
		reached, n = h.waitForTrigger(ctx, apply, plan, target, it.TargetQueue)
	}
	if reached {
		faultAt = time.Now()
		it.Injected = true
		it.InjectedAt = faultAt.Sub(apply.Started()).Seconds()
		it.InjectedTarget = n
		var err error
		f, err = h.inject(background, &bg, apply, plan, it.TargetQueue, target, tally)
		if err != nil {
			it.Notes = append(it.Notes, "injecting the fault: "+err.Error())
		}
		if f.note != "" {
			it.Notes = append(it.Notes, f.note)
		}
	} else if plan.Kind.Anytime() {
		it.Notes = append(it.Notes, fmt.Sprintf("the first apply ended before %.1f s: the fault was not injected",
			plan.AtFraction*it.ReferenceSeconds))
	} else {
		it.Notes = append(it.Notes, fmt.Sprintf("the first apply ended before the target held %d messages: the fault was not injected", plan.TriggerAt))
	}
	err = waitApply(apply)
	if f != nil {
		<-f.done // a broker restarted, a stall ended, a lock released: as an operator sees it
		if f.err != nil {
			it.Problem = "ending the fault: " + f.err.Error()
		}
		if f.orphan > 0 {
			it.Notes = append(it.Notes, h.orphanNote(f.orphan))
		}
	}
	if h.reapply(ctx, ws, apply, err, applyLimit, it) != nil {
		return
	}
	it.Recovered = true
	if !faultAt.IsZero() {
		it.RecoverySeconds = time.Since(faultAt).Seconds()
	}
	stopBackground() // the slow consumer, once the transfer is done
}

// reapply is the operator's recovery after an apply that ended with err: apply again, up to
// MaxApplies applies in all, waiting between tries (for a copy's lease to lapse when a
// refusal says so). It returns nil once an apply succeeded, else the last apply's error.
func (h *runner) reapply(ctx context.Context, ws *harness.Workspace, apply *harness.Apply, err error, applyLimit time.Duration, it *Iteration) error {
	for err != nil && it.Applies < h.cfg.MaxApplies && ctx.Err() == nil {
		h.logf("apply %d failed: %v", it.Applies, err)
		it.Notes = append(it.Notes, fmt.Sprintf("apply %d: %s", it.Applies, firstErrorLine(apply.Output())))
		pause := 2 * time.Second
		if lapse, ok := h.leaseLapse(ctx, it); ok {
			// Refused while another process's lease on the copy lasts: the refusal says until
			// when (the ledger's lease expiry), and an operator who reads it applies again then.
			pause = min(max(time.Until(lapse)+time.Second, pause), maxLeaseWait)
			it.Notes = append(it.Notes, fmt.Sprintf("waited %s for the lease to lapse, as the refusal said", pause.Round(100*time.Millisecond)))
		}
		if !sleep(ctx, pause) {
			break
		}
		next, startErr := ws.StartApply(ctx, applyLimit)
		if startErr != nil {
			it.Notes = append(it.Notes, fmt.Sprintf("apply %d: %v", it.Applies+1, startErr))
			return startErr
		}
		apply = next
		it.Applies++
		err = waitApply(apply)
	}
	if err != nil {
		it.Notes = append(it.Notes, fmt.Sprintf("apply %d: %s", it.Applies, firstErrorLine(apply.Output())))
		return err
	}
	return nil
}

// runAtPoint waits for the first apply, whose provider kills itself at plan.Point, then
// recovers as an operator would.
func (h *runner) runAtPoint(ctx context.Context, ws *harness.Workspace, apply *harness.Apply, applyLimit time.Duration, plan Plan, it *Iteration) {
	err := waitApply(apply)
	if err == nil {
		it.Notes = append(it.Notes, fmt.Sprintf("the first apply succeeded: the run never reached %s", plan.Point))
		it.Recovered = true
		return
	}
	faultAt := time.Now()
	it.Injected = true
	it.InjectedAt = faultAt.Sub(apply.Started()).Seconds()
	if h.reapply(ctx, ws, apply, err, applyLimit, it) != nil {
		return
	}
	it.Recovered = true
	it.RecoverySeconds = time.Since(faultAt).Seconds()
}

// waitApply waits for terraform to exit and returns its error, with where its output is and
// its first error (nil: the apply succeeded).
func waitApply(a *harness.Apply) error {
	if err := a.Wait(); err != nil {
		return fmt.Errorf("terraform apply (output in %s): %w: %s", a.LogPath(), err, firstErrorLine(a.Output()))
	}
	return nil
}

// sleep waits d, or less when ctx ends first; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// waitForTrigger waits until the target queue holds plan.TriggerAt messages (polled through
// management), or the apply ends first.
func (h *runner) waitForTrigger(ctx context.Context, apply *harness.Apply, plan Plan, target *artemis.Client, queue string) (bool, int64) {
	if plan.TriggerAt == 0 {
		return true, 0
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-apply.Done():
			return false, 0
		case <-ctx.Done():
			return false, 0
		case <-tick.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		q, err := target.Queue(qctx, queue)
		cancel()
		if err == nil && q.MessageCount >= int64(plan.TriggerAt) {
			return true, q.MessageCount
		}
	}
}

// orphanNote waits, bounded, for a provider whose terraform was killed, and kills it if it
// outlives the wait: the harness never leaves a process behind.
func (h *runner) orphanNote(pid int) string {
	start := time.Now()
	for harness.Alive(pid) && time.Since(start) < 2*time.Minute {
		time.Sleep(200 * time.Millisecond)
	}
	if harness.Alive(pid) {
		_ = harness.Kill(pid)
		return fmt.Sprintf("the provider (pid %d) outlived its killed terraform by %s and was killed by the harness", pid, time.Since(start).Round(time.Second))
	}
	return fmt.Sprintf("the provider (pid %d) exited %s after its terraform was killed", pid, time.Since(start).Round(100*time.Millisecond))
}

// firstErrorLine is terraform's first "Error:" summary and the paragraph of detail after it,
// on one line, for the notes.
func firstErrorLine(out string) string {
	var parts []string
	inError := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(strings.Trim(line, "│╷╵ "))
		if !inError {
			if rest, ok := strings.CutPrefix(line, "Error: "); ok {
				parts, inError = append(parts, rest+":"), true
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "with ") || strings.HasPrefix(line, "on ") || strings.Contains(line, "resource \"") {
			if len(parts) > 1 && line == "" {
				break
			}
			continue
		}
		parts = append(parts, line)
	}
	if len(parts) == 0 {
		return harness.LastLines(out, 2)
	}
	s := strings.Join(parts, " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
