package transfer

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// expiryFate is what happens to a relayed message's expiry.
type ExpiryFate int8

const (
	ExpiryNone ExpiryFate = iota // it has none, or the run cannot tell
	ExpiryKept                   // restored from the run's expiry record
	ExpiryLost                   // it had one, and no record of it exists
)

// drainTimeout bounds how long a stopping relay still waits for the outcomes of messages it
// already sent, so that it can settle their staged copies instead of leaving them ambiguous.
const DrainTimeout = 15 * time.Second

// sendUnlessStopped sends msg unless ctx has ended. Once sent, the send itself is not cut short
// by ctx: go-amqp leaves a send whose context ends midway in an unknown state, possibly on the
// target with no outcome to await, so a stopping relay could neither settle its staged copy nor
// count it. The send waits for credit and an in-flight slot for drainTimeout at most.
func sendUnlessStopped(ctx context.Context, s *artemis.Sender, msg *amqp.Message) (*artemis.PendingSend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
	defer cancel()
	return s.Send(sendCtx, msg)
}

// flight is a batch of a move on its way to the target: the staged messages, their copies
// (outgoing), and what became of each copy's expiry.
type flight struct {
	Outgoing
	batch  []*amqp.Message
	expiry []ExpiryFate
	ids    []int64 // source ids, as recorded in the in-flight record
}

// startBatch records a batch in the in-flight journal and sends it, without waiting for the
// outcomes. The record lists the batch and the one still unconfirmed before it (prevIDs):
// if this process dies, a return knows every staged message the target may already hold.
// After a send error the flight holds what was sent, to be confirmed.
func (r *mover) startBatch(ctx context.Context, links *relayLinks, batch []*amqp.Message, prevIDs []int64) (*flight, error) {
	f := &flight{Outgoing: Outgoing{copies: make([]*amqp.Message, len(batch))}, batch: batch, expiry: make([]ExpiryFate, len(batch)), ids: make([]int64, len(batch))}
	for i, staged := range batch {
		origin, err := originOf(staged)
		if err != nil {
			return nil, fmt.Errorf("run %s: a message in staging queue %s cannot be relayed safely: %w", r.Run.RunID, StagingQueue(r.Run.RunID), err)
		}
		expiresAt, known := r.window.expiryOf(origin.MessageID)
		switch {
		case known:
			f.expiry[i] = ExpiryKept
		case r.window.active:
			f.expiry[i] = ExpiryLost // staged from the window, but not the message whose expiry was read
		}
		f.copies[i] = OutgoingCopy(staged, DuplicateID(r.Run.RunID, r.Run.SourceNodeID, origin.MessageID), expiresAt)
		f.ids[i] = origin.MessageID
	}
	_, total, _ := r.Progress.Relayed.Counts()
	record := inFlightRecord{SourceIDs: append(append(make([]int64, 0, len(prevIDs)+len(f.ids)), prevIDs...), f.ids...),
		RelayedBefore: total, Confirmed: r.Progress.Relayed.RecentIDs()}
	if err := sendRecord(ctx, links.journal, r.Run.RunID, recordInFlight, record); err != nil {
		return nil, err
	}
	return f, r.SendCopies(ctx, links.sender, &f.Outgoing, AllIndexes(len(batch)))
}

// finishBatch waits for a flight's outcomes and accepts each staged message only after the
// target accepted its copy (deliver: a message the target refuses for now is sent again under
// the same duplicate id; a permanent refusal stops the run with the message still staged), then
// counts the batch and adds it to the ledger's counters.
func (r *mover) finishBatch(ctx context.Context, links *relayLinks, f *flight) error {
	err := r.Deliver(ctx, links.sender, &f.Outgoing, "run "+r.Run.RunID, "relaying to "+r.Run.Spec.Target.String(),
		func(ctx context.Context, i int) error {
			if err := links.receiver.Accept(ctx, f.batch[i]); err != nil {
				return err
			}
			if !r.Progress.Relayed.Confirmed(f.ids[i]) { // a resend was counted, with its expiry, when first confirmed
				r.Progress.AddExpiry(f.expiry[i])
			}
			return nil
		})
	if err != nil {
		return err
	}
	r.Progress.Relayed.EndBatch()
	r.Progress.SetWaiting("")
	r.Progress.Report("")
	// The ledger's counters follow each batch; the relay waits while the ledger is
	// unreachable, for the retry budget at most.
	return r.Book.AddBatch(ctx, r.Progress)
}
