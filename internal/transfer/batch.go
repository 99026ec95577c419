package transfer

import (
	"context"
	"errors"
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

// flight is a batch on its way to the target: the staged messages, their copies, and the
// sends not yet confirmed.
type flight struct {
	batch  []*amqp.Message
	copies []*amqp.Message
	expiry []expiryFate
	ids    []int64 // source ids, as recorded in the in-flight record
	sent   []int   // indexes of the messages sent and awaiting their outcome
	sends  []*artemis.PendingSend
}

// startBatch records a batch in the in-flight journal and sends it, without waiting for the
// outcomes. The record lists the batch and the one still unconfirmed before it (prevIDs):
// if this process dies, a return knows every staged message the target may already hold.
// After a send error the flight holds what was sent, to be confirmed.
func (r *runner) startBatch(ctx context.Context, links *relayLinks, batch []*amqp.Message, prevIDs []int64) (*flight, error) {
	f := &flight{batch: batch, copies: make([]*amqp.Message, len(batch)), expiry: make([]expiryFate, len(batch)), ids: make([]int64, len(batch))}
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
	all := make([]int, len(batch))
	for i := range all {
		all[i] = i
	}
	return f, r.send(ctx, links, f, all)
}

// send sends the given messages of a flight, pipelined, until the first error.
func (r *runner) send(ctx context.Context, links *relayLinks, f *flight, indexes []int) error {
	f.sent, f.sends = f.sent[:0], f.sends[:0]
	for _, i := range indexes {
		if err := r.pace.wait(ctx); err != nil { // every send to the target keeps to the cap
			return err
		}
		if r.hooks.BeforeSend != nil {
			r.hooks.BeforeSend()
		}
		p, err := sendUnlessStopped(ctx, links.sender, f.copies[i])
		if err != nil {
			return err
		}
		f.sent, f.sends = append(f.sent, i), append(f.sends, p)
	}
	return nil
}

// finishBatch waits for a flight's outcomes and accepts each staged message only after the
// target accepted its copy. A message the target refuses for now (full address) is sent again,
// after waiting, under the same duplicate id; a permanent refusal stops the run with the
// message still staged. The outcomes of what was sent are awaited even when ctx ends (within
// drainTimeout), so a graceful stop leaves no message on both brokers.
func (r *runner) finishBatch(ctx context.Context, links *relayLinks, f *flight) error {
	for attempt := 0; attempt < 1_000_000; attempt++ {
		retry, err := r.confirm(ctx, links, f)
		if err != nil || len(retry) == 0 {
			f.sent, f.sends = nil, nil
			if err == nil {
				r.progress.relayed.endBatch()
				r.progress.setWaiting("")
				r.progress.report("")
				// The ledger's counters follow each batch; the relay waits while the ledger
				// is unreachable, for the retry budget at most.
				err = r.book.addBatch(ctx, r.progress)
			}
			return err
		}
		f.sent, f.sends = nil, nil
		if err := r.waitForCapacity(ctx); err != nil {
			return err
		}
		if err := sleep(ctx, backoff(attempt+1)); err != nil {
			return err
		}
		if err := r.send(ctx, links, f, retry); err != nil {
			_, cerr := r.confirm(ctx, links, f)
			return errors.Join(err, cerr)
		}
	}
	return fmt.Errorf("run %s: the target kept refusing messages", r.m.RunID)
}

// confirm waits for the outcomes of a flight's sent messages, in order, and accepts each staged
// message whose copy the target accepted. It returns the messages to send again.
func (r *runner) confirm(ctx context.Context, links *relayLinks, f *flight) ([]int, error) {
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	batch, expiry := f.batch, f.expiry
	var retry []int
	for j, i := range f.sent {
		err := f.sends[j].Wait(drainCtx)
		if r.hooks.AfterConfirm != nil {
			r.hooks.AfterConfirm()
		}
		var oe *artemis.OutcomeError
		switch {
		case err == nil:
			if err := links.receiver.Accept(drainCtx, batch[i]); err != nil {
				return nil, err
			}
			if r.progress.relayed.confirmed(f.ids[i]) {
				continue // a resend: counted, with its expiry, when it was first confirmed
			}
			r.progress.addExpiry(expiry[i])
		case errors.As(err, &oe) && oe.Retryable():
			r.progress.setWaiting("waiting: the target refused a message for now (" + oe.Outcome.String() + " " + oe.Condition + "); retrying")
			retry = append(retry, i)
		default:
			return nil, fmt.Errorf("run %s: relaying to %s: %w", r.m.RunID, r.m.Spec.Target, err)
		}
	}
	return retry, nil
}
