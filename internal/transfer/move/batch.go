package move

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// flight is a batch of a move on its way to the target: the staged messages, their copies
// (outgoing), and what became of each copy's expiry.
type flight struct {
	core.Outgoing
	batch  []*amqp.Message
	expiry []core.ExpiryFate
	ids    []int64 // source ids, as recorded in the in-flight record
}

// startBatch records a batch in the in-flight journal and sends it, without waiting for the
// outcomes. After a send error the flight holds what was sent, to be confirmed.
func (r *runner) startBatch(ctx context.Context, links *relayLinks, batch []*amqp.Message, prevIDs []int64) (*flight, error) {
	f, err := r.recordBatch(ctx, links, batch, prevIDs)
	if err != nil {
		return nil, err
	}
	return f, r.SendCopies(ctx, links.sender, &f.Outgoing, core.AllIndexes(len(batch)))
}

// recordBatch makes a batch's copies and records it in the in-flight journal. The record lists
// the batch and the one still unconfirmed before it (prevIDs): if this process dies, a return
// knows every staged message the target may already hold.
func (r *runner) recordBatch(ctx context.Context, links *relayLinks, batch []*amqp.Message, prevIDs []int64) (*flight, error) {
	f := &flight{Outgoing: core.Outgoing{Copies: make([]*amqp.Message, len(batch))}, batch: batch, expiry: make([]core.ExpiryFate, len(batch)), ids: make([]int64, len(batch))}
	for i, staged := range batch {
		origin, err := originOf(staged)
		if err != nil {
			return nil, fmt.Errorf("run %s: a message in staging queue %s cannot be relayed safely: %w", r.Run.RunID, StagingQueue(r.Run.RunID), err)
		}
		expiresAt, known := r.window.expiryOf(origin.MessageID)
		switch {
		case known:
			f.expiry[i] = core.ExpiryKept
		case r.window.active:
			f.expiry[i] = core.ExpiryLost // staged from the window, but not the message whose expiry was read
		}
		f.Copies[i] = r.OutgoingCopy(staged, duplicateID(r.Run.RunID, r.Run.SourceNodeID, origin.MessageID), expiresAt)
		f.ids[i] = origin.MessageID
	}
	record := r.inFlightRecordOf(prevIDs, f.ids)
	if err := sendRecord(ctx, links.journal, r.Run.RunID, recordInFlight, record, r.recordWait()); err != nil {
		return nil, err
	}
	return f, nil
}

// inFlightRecordOf is the in-flight record of a batch about to be sent (ids) while the one
// before it (prevIDs) is unconfirmed, with the ids the run still owes an earlier process's
// record (runner.owed).
func (r *runner) inFlightRecordOf(prevIDs, ids []int64) inFlightRecord {
	_, total, _ := r.Progress.Relayed.Counts()
	rec := inFlightRecord{SourceIDs: append(append(make([]int64, 0, len(prevIDs)+len(ids)), prevIDs...), ids...),
		RelayedBefore: total, Confirmed: r.Progress.Relayed.RecentIDs()}
	if len(r.owed) == 0 {
		return rec
	}
	listed := make(map[int64]struct{}, len(rec.SourceIDs))
	for _, id := range rec.SourceIDs {
		listed[id] = struct{}{}
	}
	for _, id := range slices.Sorted(maps.Keys(r.owed)) {
		if _, ok := listed[id]; !ok {
			rec.Owed = append(rec.Owed, id)
		}
	}
	return rec
}

// relayFirst relays a batch of one message, the run's first, with proof that the target queue
// took it (core.Worker.DeliverFirst) before its staged copy is accepted. When the target
// discarded it, a new in-flight record says that the target holds nothing of the batch (so a
// return puts the message back on the source) and marks the run, so that no later process
// sends the message again under a duplicate id the target has already spent on it.
func (r *runner) relayFirst(ctx context.Context, links *relayLinks, batch []*amqp.Message) error {
	f, err := r.recordBatch(ctx, links, batch, nil)
	if err != nil {
		return err
	}
	err = r.DeliverFirst(ctx, links.sender, &f.Outgoing, 0, "run "+r.Run.RunID, "relaying to "+r.Run.Spec.Target.String())
	if errors.Is(err, core.ErrTargetDiscards) {
		record := r.inFlightRecordOf(nil, nil)
		record.SourceIDs, record.TargetDiscarded = nil, f.ids
		return errors.Join(err, sendRecord(context.WithoutCancel(ctx), links.journal, r.Run.RunID, recordInFlight, record, r.recordWait()))
	}
	if err != nil {
		return err
	}
	if err := r.acceptStaged(ctx, links, f, 0); err != nil {
		return err
	}
	return r.endBatch(ctx)
}

// finishBatch waits for a flight's outcomes and accepts each staged message only after the
// target accepted its copy (deliver: a message the target refuses for now is sent again under
// the same duplicate id; a permanent refusal stops the run with the message still staged), then
// counts the batch and adds it to the ledger's counters.
func (r *runner) finishBatch(ctx context.Context, links *relayLinks, f *flight) error {
	err := r.Deliver(ctx, links.sender, &f.Outgoing, "run "+r.Run.RunID, "relaying to "+r.Run.Spec.Target.String(),
		func(ctx context.Context, i int) error { return r.acceptStaged(ctx, links, f, i) })
	if err != nil {
		return err
	}
	return r.endBatch(ctx)
}

// acceptStaged accepts the staged message of copy i of a flight, which the target accepted,
// and counts it.
func (r *runner) acceptStaged(ctx context.Context, links *relayLinks, f *flight, i int) error {
	if err := links.receiver.Accept(ctx, f.batch[i]); err != nil {
		return err
	}
	delete(r.owed, f.ids[i])
	if !r.Progress.Relayed.Confirmed(f.ids[i]) { // a resend was counted, with its expiry, when first confirmed
		r.Progress.AddExpiry(f.expiry[i])
	}
	return nil
}

// endBatch counts a batch whose every copy the target accepted, and adds it to the ledger's
// counters.
func (r *runner) endBatch(ctx context.Context) error {
	r.Progress.Relayed.EndBatch()
	r.Progress.SetWaiting("")
	r.Progress.Report("")
	// The ledger's counters follow each batch; the relay waits while the ledger is
	// unreachable, for the retry budget at most.
	return r.Book.AddBatch(ctx, r.Progress)
}
