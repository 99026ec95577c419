package move

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Return puts everything still staged back on the run's source queue, broker-side, and removes
// staging. It takes the run's lease, so it refuses while another process works on the run
// (relays, stages or returns it). The messages the target may already hold (the batches in
// flight when the run stopped, and the confirmed batches whose acknowledgements the source may
// have lost) are relayed (and dropped by the target's duplicate detection if it has them)
// rather than returned, so no message ends up on both brokers.
func (e *Mover) Return(ctx context.Context, runID string) (core.Result, error) {
	if _, err := e.setup.Source.Queue(ctx, ManifestQueue(runID)); err != nil {
		if _, stagingErr := e.setup.Source.Queue(ctx, StagingQueue(runID)); stagingErr != nil {
			return core.Result{}, fmt.Errorf("returning run %s: %w", runID, stagingErr)
		}
	}
	recs, err := e.readRecords(ctx, runID)
	if err != nil {
		return core.Result{}, err
	}
	return e.returnStaged(ctx, *recs.Manifest, recs)
}

// returnWithoutManifest returns a run whose manifest is gone to the queue its staged messages
// came from (sourceQueue, as recorded on each message by the staging move). With no manifest
// there is no in-flight record either, so the messages of a batch that was in flight when the
// run died may end up on both brokers; Return is the better path whenever the manifest exists.
func (e *Mover) returnWithoutManifest(ctx context.Context, runID, sourceQueue string) (core.Result, error) {
	m := Manifest{Run: core.Run{RunID: runID, Spec: core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: e.setup.Source.Name(), Queue: sourceQueue}}}}
	return e.returnStaged(ctx, m, runRecords{})
}

// returnStaged returns run m, whose other records (in flight, expiry, staging) are recs'.
func (e *Mover) returnStaged(ctx context.Context, m Manifest, recs runRecords) (core.Result, error) {
	// With a ledger, a return is recorded and fenced like a relay: it does not start while
	// another process works on the run.
	book, err := e.setup.OpenBook(ctx, m.Run, core.BookReturn)
	if err != nil {
		return core.Result{RunID: m.RunID, T0: m.T0}, fmt.Errorf("returning run %s: %w", m.RunID, err)
	}
	r := &runner{Worker: e.setup.NewWorker(m.Run, e.setup.Hooks, core.PhaseReturning)}
	return r.UnderLease(ctx, book, "returning it", func(ctx context.Context) (core.Result, error) {
		return e.returnWork(ctx, r, recs)
	})
}

// returnWork is returnStaged's work, for the runner r of the run.
func (e *Mover) returnWork(ctx context.Context, r *runner, recs runRecords) (core.Result, error) {
	m, inFlight := r.Run, recs.InFlight
	expiry := recs.Expiry
	// The in-flight messages relayed below keep their expiry; those moved back to the source
	// lose it, as any broker-side move does.
	r.window.resume(expiry)
	res := core.Result{RunID: m.RunID, T0: m.T0}
	staging := StagingQueue(m.RunID)
	// The lease excludes a live process of the run, which could stage more meanwhile: staging
	// is emptied, checked empty and removed by the one process that can add to it. A run whose
	// manifest queue is gone gets it back, empty, to hold the lease on.
	if err := createManifestQueue(ctx, e.setup.Source, m.RunID); err != nil {
		return res, fmt.Errorf("returning run %s: %w", m.RunID, err)
	}
	var err error
	if r.lease, err = e.holdLease(ctx, m.RunID, m.SourceNodeID); err != nil {
		return res, fmt.Errorf("returning run %s: %w", m.RunID, err)
	}
	defer r.lease.release()
	if err := r.outwaitLateMoves(ctx, recs.Staging); err != nil {
		return res, fmt.Errorf("returning run %s: %w", m.RunID, err)
	}
	q, err := e.setup.Source.Queue(ctx, staging)
	if errors.Is(err, artemis.ErrNotFound) {
		// Killed as it started or finished: nothing was staged or nothing is left; only the
		// rest of the run to remove.
		r.Book.StartCounting()
		return res, removeStaging(ctx, e.setup.Source, r.lease, m.RunID, r.Hooks)
	}
	if err != nil {
		return res, fmt.Errorf("returning run %s: %w", m.RunID, err)
	}
	// As for a relay, a consumer of a process that just died is given a moment to go away.
	for deadline := time.Now().Add(r.Graces.Busy); q.ConsumerCount > 0 && time.Now().Before(deadline); {
		if err := core.Sleep(ctx, 500*time.Millisecond); err != nil {
			return res, err
		}
		if q, err = e.setup.Source.Queue(ctx, staging); err != nil {
			return res, fmt.Errorf("returning run %s: %w", m.RunID, err)
		}
	}
	if q.ConsumerCount > 0 {
		return res, fmt.Errorf("returning run %s: %w; stop it first", m.RunID, core.ErrRunBusy)
	}
	// As a resume does, count on from what earlier processes relayed, so that a message they
	// relayed whose acknowledgement was lost counts as resent, not relayed twice. Counted under
	// both leases (the ledger's, renewed since UnderLease began, and the broker's): counting a
	// deep staging queue can outlast a lease that is not renewed meanwhile.
	r.Hooks.Reach(core.PointReturnCounting)
	base, confirmed, err := e.relayedBefore(ctx, m.RunID, inFlight)
	if err != nil {
		return res, fmt.Errorf("returning run %s: %w", m.RunID, err)
	}
	r.Progress.ContinueAfter(base, confirmed)
	r.Book.StartCounting()
	if q.MessageCount == 0 && m.Spec.Source.Queue == "" {
		// Nothing staged and nowhere known to return to: only staging to remove.
		return res, removeStaging(ctx, e.setup.Source, r.lease, m.RunID, r.Hooks)
	}
	if _, err := e.setup.Source.Queue(ctx, m.Spec.Source.Queue); err != nil {
		return res, fmt.Errorf("returning run %s to its source queue: %w", m.RunID, err)
	}
	if err := e.returnQuarantined(ctx, r, m); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	if inFlight != nil && len(inFlight.mayBeOnTarget()) > 0 && q.MessageCount > 0 {
		if err := e.settleInFlight(ctx, r, inFlight.mayBeOnTarget()); err != nil {
			return res, r.stopped(ctx, &res, err)
		}
		r.Progress.Fill(&res)
	}
	for {
		if err := ctx.Err(); err != nil {
			return res, r.stopped(ctx, &res, err)
		}
		// rejectDuplicates false: the broker would otherwise delete a message whose duplicate
		// id the source address has seen, instead of returning it.
		n, err := moveUncut(ctx, e.setup.Source, r.lease, artemis.MoveRequest{Queue: staging, TargetQueue: m.Spec.Source.Queue,
			RejectDuplicates: false, Count: r.Opts.ChunkSize})
		if err != nil {
			return res, r.stopped(ctx, &res, fmt.Errorf("returning run %s: %w", m.RunID, err))
		}
		r.Progress.AddReturned(int64(n))
		if n < r.Opts.ChunkSize {
			break
		}
	}
	r.Progress.Fill(&res)
	if err := r.Book.Complete(ctx, r.Progress, core.StatusReturned); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	if err := removeStaging(ctx, e.setup.Source, r.lease, m.RunID, r.Hooks); err != nil {
		return res, err
	}
	return res, nil
}

// returnQuarantined puts the messages the broker could not convert for the relay back on the
// source. Artemis (seen on 2.40) dead-letters a copy of such a message into quarantine but leaves
// the original in staging, uncounted by MessageCount: the original goes back if staging still
// has it, else the quarantined copy does; never both. The quarantine queue then holds only
// duplicates and is removed.
func (e *Mover) returnQuarantined(ctx context.Context, r *runner, m core.Run) error {
	quarantine := QuarantineQueue(m.RunID)
	if _, err := e.setup.Source.Queue(ctx, quarantine); errors.Is(err, artemis.ErrNotFound) {
		return nil
	}
	duplicates := map[int64]bool{} // quarantined copies whose original went back from staging
	paged := 0
	for round := 0; round < 10_000; round++ { // each round lists at most the broker's page of 200
		if err := r.lease.fence(ctx); err != nil {
			return err
		}
		msgs, err := e.setup.Source.ListMessages(ctx, quarantine, "")
		if err != nil {
			return fmt.Errorf("returning the quarantined messages of run %s: %w", m.RunID, err)
		}
		handled := 0
		paged = 0
		for _, msg := range msgs {
			id, copyOf := jsonInt(msg["messageID"]), jsonInt(msg[core.PropOrigMessageID])
			if id == 0 || duplicates[id] {
				continue
			}
			if copyOf != 0 {
				back, err := e.setup.Source.MoveMessage(ctx, StagingQueue(m.RunID), copyOf, m.Spec.Source.Queue)
				if err != nil {
					return err
				}
				if back {
					duplicates[id] = true
					r.Progress.AddReturned(1)
					handled++
					continue
				}
			}
			moved, err := e.setup.Source.MoveMessage(ctx, quarantine, id, m.Spec.Source.Queue)
			if err != nil {
				return err
			}
			if !moved {
				paged++ // by-id moves do not see paged messages
				continue
			}
			r.Progress.AddReturned(1)
			handled++
		}
		if handled == 0 {
			break
		}
	}
	if paged > 0 {
		if len(duplicates) > 0 {
			return fmt.Errorf("run %s: %d quarantined messages are paged and %d others are duplicates of returned ones; move the paged ones from %s to %s by hand",
				m.RunID, paged, len(duplicates), quarantine, m.Spec.Source.Queue)
		}
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			n, err := moveUncut(ctx, e.setup.Source, r.lease, artemis.MoveRequest{Queue: quarantine, TargetQueue: m.Spec.Source.Queue, Count: r.Opts.ChunkSize})
			if err != nil {
				return fmt.Errorf("returning the quarantined messages of run %s: %w", m.RunID, err)
			}
			r.Progress.AddReturned(int64(n))
			if n < r.Opts.ChunkSize {
				break
			}
		}
	}
	// Only the duplicates are left.
	if err := r.lease.fence(ctx); err != nil {
		return err
	}
	if err := e.setup.Source.DestroyQueue(ctx, quarantine); err != nil && !errors.Is(err, artemis.ErrNotFound) {
		return fmt.Errorf("removing the quarantine of run %s: %w", m.RunID, err)
	}
	return nil
}

// jsonInt reads a whole number from a decoded JSON value.
func jsonInt(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case string:
		var i int64
		_, _ = fmt.Sscan(n, &i)
		return i
	}
	return 0
}

// settleInFlight relays to the target the staged messages of ids, those it may hold already.
func (e *Mover) settleInFlight(ctx context.Context, r *runner, ids []int64) error {
	if e.setup.Target == nil {
		return fmt.Errorf("run %s: %d messages were in flight to the target when the run stopped; returning them needs the target broker too",
			r.Run.RunID, len(ids))
	}
	if err := r.ReadTarget(ctx); err != nil {
		return err
	}
	// Until each is relayed, every in-flight record of this return lists them all: a return
	// stopped after some selectors leaves the others recorded for the next.
	r.owe(ids)
	for start := 0; start < len(ids); start += inFlightSelectorChunk {
		r.selector = idSelector(ids[start:min(start+inFlightSelectorChunk, len(ids))])
		if err := r.relay(ctx, stagingIsComplete()); err != nil {
			return err
		}
	}
	r.selector = ""
	// Every one of ids still staged was relayed: the rest are gone from staging.
	r.owed = nil
	return nil
}
