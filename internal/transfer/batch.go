package transfer

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// expiryFate is what happens to a relayed message's expiry.
type expiryFate int8

const (
	expiryNone expiryFate = iota // it has none, or the run cannot tell
	expiryKept                   // restored from the run's expiry record
	expiryLost                   // it had one, and no record of it exists
)

// drainTimeout bounds how long a stopping relay still waits for the outcomes of messages it
// already sent, so that it can settle their staged copies instead of leaving them ambiguous.
const drainTimeout = 15 * time.Second

// sendUnlessStopped sends msg unless ctx has ended. Once sent, the send itself is not cut short
// by ctx: go-amqp leaves a send whose context ends midway in an unknown state, possibly on the
// target with no outcome to await, so a stopping relay could neither settle its staged copy nor
// count it. The send waits for credit and an in-flight slot for drainTimeout at most.
func sendUnlessStopped(ctx context.Context, s *artemis.Sender, msg *amqp.Message) (*artemis.PendingSend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	return s.Send(sendCtx, msg)
}

// flight is a batch of a move on its way to the target: the staged messages, their copies
// (outgoing), and what became of each copy's expiry.
type flight struct {
	outgoing
	batch  []*amqp.Message
	expiry []expiryFate
	ids    []int64 // source ids, as recorded in the in-flight record
}

// startBatch records a batch in the in-flight journal and sends it, without waiting for the
// outcomes. The record lists the batch and the one still unconfirmed before it (prevIDs):
// if this process dies, a return knows every staged message the target may already hold.
// After a send error the flight holds what was sent, to be confirmed.
func (r *mover) startBatch(ctx context.Context, links *relayLinks, batch []*amqp.Message, prevIDs []int64) (*flight, error) {
	f := &flight{outgoing: outgoing{copies: make([]*amqp.Message, len(batch))}, batch: batch, expiry: make([]expiryFate, len(batch)), ids: make([]int64, len(batch))}
	for i, staged := range batch {
		origin, err := originOf(staged)
		if err != nil {
			return nil, fmt.Errorf("run %s: a message in staging queue %s cannot be relayed safely: %w", r.m.RunID, StagingQueue(r.m.RunID), err)
		}
		expiresAt, known := r.window.expiryOf(origin.MessageID)
		switch {
		case known:
			f.expiry[i] = expiryKept
		case r.window.active:
			f.expiry[i] = expiryLost // staged from the window, but not the message whose expiry was read
		}
		f.copies[i] = relayCopy(staged, DuplicateID(r.m.RunID, r.m.SourceNodeID, origin.MessageID), expiresAt)
		f.ids[i] = origin.MessageID
	}
	_, total, _ := r.progress.relayed.counts()
	record := inFlightRecord{SourceIDs: append(append(make([]int64, 0, len(prevIDs)+len(f.ids)), prevIDs...), f.ids...),
		RelayedBefore: total, Confirmed: r.progress.relayed.recentIDs()}
	if err := sendRecord(ctx, links.journal, r.m.RunID, recordInFlight, record); err != nil {
		return nil, err
	}
	return f, r.sendCopies(ctx, links.sender, &f.outgoing, allIndexes(len(batch)))
}

// finishBatch waits for a flight's outcomes and accepts each staged message only after the
// target accepted its copy (deliver: a message the target refuses for now is sent again under
// the same duplicate id; a permanent refusal stops the run with the message still staged), then
// counts the batch and adds it to the ledger's counters.
func (r *mover) finishBatch(ctx context.Context, links *relayLinks, f *flight) error {
	err := r.deliver(ctx, links.sender, &f.outgoing, "run "+r.m.RunID, "relaying to "+r.m.Spec.Target.String(),
		func(ctx context.Context, i int) error {
			if err := links.receiver.Accept(ctx, f.batch[i]); err != nil {
				return err
			}
			if !r.progress.relayed.confirmed(f.ids[i]) { // a resend was counted, with its expiry, when first confirmed
				r.progress.addExpiry(f.expiry[i])
			}
			return nil
		})
	if err != nil {
		return err
	}
	r.progress.relayed.endBatch()
	r.progress.setWaiting("")
	r.progress.report("")
	// The ledger's counters follow each batch; the relay waits while the ledger is
	// unreachable, for the retry budget at most.
	return r.book.addBatch(ctx, r.progress)
}
