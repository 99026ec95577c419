package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// The first message of every run is sent alone, and the target queue's count of messages
// added is read before and after it: a broker confirms a message that it routes to no queue
// (one of the other routing type, an address whose bindings changed) exactly as one it stored,
// so the sender's outcome alone cannot show that the target queue took it. The mode accepts
// (a move) or records (a copy) that first message only once the count shows it arrived, so a
// target that discards stops the run with the message still on the source side, and nothing
// more is sent. The refusal rules' canary (probeDuplicateDetection) shows the same before a
// run starts, on a queue of its own; this shows it on the target queue itself.
//
// The proof is tried once per run, on the message that is first in the run's first process:
// that one cannot be a message the target already holds under its duplicate id (which the
// broker also confirms without adding it), so a count that did not rise means a discard.
// When the proof cannot be made (the count cannot be read, the outcome was lost with the
// connection, or the count went down, as it does when the target restarts), the run goes on
// unproven and says so in its progress notes.

// ErrTargetDiscards: the target broker confirmed the first message of a run and its queue did
// not take it. Nothing of the run reached the target; its messages stay on the source side.
var ErrTargetDiscards = errors.New("the target broker confirmed a message that its queue did not take")

// ProveFirstDelivery asks that the next message the run sends be proven to reach the target
// queue (DeliverFirst): what a mode asks when a run starts.
func (r *Worker) ProveFirstDelivery() { r.provePending = true }

// ProofPending reports whether the next message is to be sent with DeliverFirst.
func (r *Worker) ProofPending() bool { return r.provePending }

// DeliverFirst sends copy i of o alone, waits for the target's outcome, and, the first time it
// is called for the run, proves that the target queue took it. It returns nil once the target
// accepted the copy (proven, or the proof could not be made); the caller then settles it as
// it settles every accepted copy. An error matching ErrTargetDiscards means the target's
// queue did not take it: the caller settles nothing. Other errors are those of Deliver.
func (r *Worker) DeliverFirst(ctx context.Context, sender *artemis.Sender, o *Outgoing, i int, who, doing string) error {
	prove := r.provePending
	r.provePending = false // one attempt per run
	var before int64
	if prove {
		q, err := r.Target.Queue(ctx, r.Run.Spec.Target.Queue)
		if err != nil {
			r.Progress.Note("relaying: the first message is sent without proof of delivery: reading the target queue: " + err.Error())
			prove = false
		}
		before = q.MessagesAdded
	}
	if err := r.SendCopies(ctx, sender, o, []int{i}); err != nil {
		return err // not sent: nothing awaits an outcome
	}
	accepted := false
	if err := r.Deliver(ctx, sender, o, who, doing, func(context.Context, int) error {
		accepted = true
		return nil
	}); err != nil {
		return err
	}
	if !accepted || !prove {
		return nil
	}
	q, err := r.addedAfter(ctx, before)
	switch {
	case err != nil:
		r.Progress.Note("relaying: the first message is unproven: reading the target queue after it: " + err.Error())
	case q.MessagesAdded > before:
		r.Progress.Note(fmt.Sprintf("relaying: the target queue %s took the first message (its count of messages added rose from %d to %d)",
			r.Run.Spec.Target, before, q.MessagesAdded))
	case q.MessagesAdded < before:
		r.Progress.Note(fmt.Sprintf("relaying: the first message is unproven: the target queue's count of messages added fell from %d to %d (a restart)",
			before, q.MessagesAdded))
	default:
		return fmt.Errorf("%s: %w: queue %s on broker %q counted %d messages added before the run's first message and still %d %s after the broker confirmed it; "+
			"its routing type is %s, and the message named it: something on that broker drops messages sent to that queue (a divert, a plugin, "+
			"a queue recreated meanwhile)", who, ErrTargetDiscards, r.Run.Spec.Target, r.Target.Name(), before, q.MessagesAdded, r.Graces.Arrival, r.targetRouting)
	}
	return nil
}

// addedAfter reads the target queue until its count of messages added differs from before or
// Graces.Arrival has passed, and returns the last read. A broker confirms a message once it is
// stored and routed; the queue takes it in (and counts it) on its own executor a moment later,
// so one read straight after the confirmation can still show the count from before.
func (r *Worker) addedAfter(ctx context.Context, before int64) (artemis.QueueInfo, error) {
	wait := 20 * time.Millisecond
	for deadline := time.Now().Add(r.Graces.Arrival); ; wait = min(2*wait, 500*time.Millisecond) {
		q, err := r.Target.Queue(ctx, r.Run.Spec.Target.Queue)
		if err != nil || q.MessagesAdded != before || !time.Now().Before(deadline) {
			return q, err
		}
		if err := Sleep(ctx, min(wait, time.Until(deadline))); err != nil {
			return q, err
		}
	}
}
