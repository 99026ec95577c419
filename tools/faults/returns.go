package faults

// return-interrupted-twice: a move interrupted, then a return of its run stopped twice at exact
// points of the return before it is applied to completion.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// ReturnStop is how one return of return-interrupted-twice stops: the provider killed
// (ActionKill) or terraform sent SIGINT (ActionInterrupt), by the provider itself, at Point:
// PointReturnCounting, or ReturnConfirm at the confirmation of the message At of the way
// through those the return settles at the target.
type ReturnStop struct {
	Action string  `json:"action"`
	Point  string  `json:"point"`
	At     float64 `json:"at,omitempty"`
}

// How a return stops, as ARTEMIS_FAULT_ACTION names it.
const (
	ActionKill      = "kill"
	ActionInterrupt = "interrupt"
)

// The points of a return a stop lands at.
const (
	PointReturnCounting = string(core.PointReturnCounting)
	ReturnConfirm       = "confirm"
)

// drawReturnStop draws one stop: either action; the start of the count a quarter of the time,
// else a confirmation anywhere in the settling.
func drawReturnStop(r *rand.Rand) ReturnStop {
	s := ReturnStop{Action: ActionKill, Point: ReturnConfirm}
	if r.IntN(2) == 1 {
		s.Action = ActionInterrupt
	}
	if r.IntN(4) == 0 {
		s.Point = PointReturnCounting
	} else {
		s.At = r.Float64()
	}
	return s
}

// Returns reports whether the kind's recovery returns the run instead of finishing it: its
// messages end on the source or the target, each once.
func (k Kind) Returns() bool { return k == ReturnInterruptedTwice }

// runReturnInterruptedTwice kills the provider of the first apply once the target holds
// plan.TriggerAt messages, applies an artemis_transfer_return of the run that stops as
// plan.Stops[0] says, applies it again to stop as plan.Stops[1] says, then applies it until it
// succeeds. A return that completes before its stop ends the iteration there.
func (h *runner) runReturnInterruptedTwice(ctx context.Context, ws *harness.Workspace, index int, plan Plan, target *artemis.Client, it *Iteration) {
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
	var last *harness.Apply
	var lastErr error
	for i, stop := range plan.Stops {
		point, note, err := h.stopPoint(ctx, runID, stop)
		if err != nil {
			it.Problem = fmt.Sprintf("return %d: %v", i+1, err)
			return
		}
		ret, err := returnWS.StartApply(ctx, applyLimit, "ARTEMIS_FAULT_POINT="+point, "ARTEMIS_FAULT_ACTION="+stop.Action)
		if err != nil {
			it.Problem = err.Error()
			return
		}
		it.Applies++
		last, lastErr = ret, waitApply(ret)
		left, err := h.runLeft(ctx, runID)
		if err != nil {
			it.Problem = err.Error()
			return
		}
		it.Notes = append(it.Notes, fmt.Sprintf("return %d, to stop (%s) at %s%s: %s", i+1, stop.Action, point, note, outcome(lastErr, ret)))
		if lastErr == nil || !left {
			// Nothing left to return: the return completed before its stop (or as it came).
			it.Notes = append(it.Notes, fmt.Sprintf("return %d left nothing of the run to return again", i+1))
			it.Recovered = true
			it.RecoverySeconds = time.Since(faultAt).Seconds()
			return
		}
	}
	// The operator's recovery gets the budget of any other kind's: the applies so far were the
	// fault's.
	recovery := *h
	recovery.cfg.MaxApplies += it.Applies - 1
	if err := recovery.reapply(ctx, returnWS, last, lastErr, applyLimit, it); err != nil {
		return
	}
	it.Recovered = true
	it.RecoverySeconds = time.Since(faultAt).Seconds()
}

// stopPoint is the ARTEMIS_FAULT_POINT of stop for the next return of runID: a confirmation is
// numbered among the staged messages the return will settle at the target (those its latest
// in-flight record lists that are still staged). With none to settle, the stop lands as the
// return starts counting instead. note says what was resolved, for the notes.
func (h *runner) stopPoint(ctx context.Context, runID string, stop ReturnStop) (point, note string, err error) {
	if stop.Point != ReturnConfirm {
		return stop.Point, "", nil
	}
	qctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	settle, err := h.toSettle(qctx, runID)
	if err != nil {
		return "", "", err
	}
	if settle == 0 {
		return PointReturnCounting, " (nothing to settle at the target)", nil
	}
	nth := 1 + int(math.Floor(stop.At*float64(settle-1)))
	return fmt.Sprintf("%s:%d", ReturnConfirm, nth), fmt.Sprintf(" (of %d to settle)", settle), nil
}

// inFlightIDs are the fields of the engine's in-flight record that list the staged messages
// the target may hold: a return settles those still staged at the target.
type inFlightIDs struct {
	SourceIDs []int64 `json:"source_ids"`
	Confirmed []int64 `json:"confirmed"`
	Owed      []int64 `json:"owed"`
}

// recordKindProperty is the application property that names a record's kind in a run's
// manifest queue; inFlightKind the in-flight record's.
const (
	recordKindProperty = "studio_record"
	inFlightKind       = "in-flight"
)

// toSettle counts the staged messages of runID that its latest in-flight record lists.
func (h *runner) toSettle(ctx context.Context, runID string) (int, error) {
	src := h.admin[brSource]
	q, err := src.Queue(ctx, transfer.ManifestQueue(runID))
	if err != nil {
		return 0, fmt.Errorf("reading the manifest queue of run %s: %w", runID, err)
	}
	conn, err := src.Connect(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	b, err := conn.NewBrowser(ctx, artemis.FQQN(transfer.StagingQueue(runID), transfer.ManifestQueue(runID)),
		artemis.BrowserOptions{Credit: 16, IdleTimeout: 3 * time.Second})
	if err != nil {
		return 0, err
	}
	var rec *inFlightIDs
	for read := int64(0); read < q.MessageCount; read++ {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			_ = b.Close(ctx)
			return 0, err
		}
		if !ok {
			break
		}
		if msg.ApplicationProperties[recordKindProperty] != inFlightKind {
			continue
		}
		text, _ := msg.Value.(string)
		if text == "" {
			text = string(msg.GetData())
		}
		rec = &inFlightIDs{}
		if err := json.Unmarshal([]byte(text), rec); err != nil {
			_ = b.Close(ctx)
			return 0, fmt.Errorf("run %s: the in-flight record: %w", runID, err)
		}
	}
	// Closed before the return starts: a return skips a run whose manifest queue has a consumer.
	if err := b.Close(ctx); err != nil {
		return 0, err
	}
	if rec == nil {
		return 0, nil
	}
	seen := map[int64]bool{}
	var ids []int64
	for _, list := range [][]int64{rec.SourceIDs, rec.Confirmed, rec.Owed} {
		for _, id := range list {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	staged := 0
	for start := 0; start < len(ids); start += 100 {
		chunk := ids[start:min(start+100, len(ids))]
		filter := ""
		for i, id := range chunk {
			if i > 0 {
				filter += " OR "
			}
			filter += fmt.Sprintf("%s = %d", core.PropOrigMessageID, id)
		}
		n, err := src.CountMatches(ctx, transfer.StagingQueue(runID), filter, len(chunk))
		if err != nil {
			return 0, fmt.Errorf("counting the staged messages of run %s: %w", runID, err)
		}
		staged += n
	}
	return staged, nil
}

// runLeft reports whether anything of runID (its staging or manifest queue) is on the source.
func (h *runner) runLeft(ctx context.Context, runID string) (bool, error) {
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	queues, err := h.admin[brSource].ListQueues(qctx, transfer.StagingQueue(runID))
	if err != nil {
		return false, fmt.Errorf("looking for what is left of run %s: %w", runID, err)
	}
	return len(queues) > 0, nil
}
