package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// ExpiryFate is what happens to a relayed message's expiry.
type ExpiryFate int8

const (
	expiryNone ExpiryFate = iota // it has none, or the run cannot tell
	ExpiryKept                   // restored from the run's expiry record
	ExpiryLost                   // it had one, and no record of it exists
)

// DrainTimeout bounds how long a stopping relay still waits for the outcomes of messages it
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

// Outgoing is a batch of copies on their way to the target: the messages to send, and the sends
// awaiting their outcome. Each mode keeps what it needs of the batch beside it.
type Outgoing struct {
	Copies []*amqp.Message
	sent   []int // indexes of the copies sent and awaiting their outcome
	sends  []*artemis.PendingSend
}

// AllIndexes is 0..n-1: every copy of a batch.
func AllIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// SendCopies sends the given copies, pipelined, until the first error. Every send to the target
// keeps to Options.MaxMessagesPerSecond.
func (r *Worker) SendCopies(ctx context.Context, sender *artemis.Sender, o *Outgoing, indexes []int) error {
	o.sent, o.sends = o.sent[:0], o.sends[:0]
	for _, i := range indexes {
		if err := r.pace.wait(ctx); err != nil {
			return err
		}
		if r.Hooks.BeforeSend != nil {
			r.Hooks.BeforeSend()
		}
		p, err := sendUnlessStopped(ctx, sender, o.Copies[i])
		if err != nil {
			return err
		}
		o.sent, o.sends = append(o.sent, i), append(o.sends, p)
	}
	return nil
}

// Deliver waits for the outcomes of o's sent copies and calls accepted for each copy the target
// accepted, in order; what the target refuses for now (a full address) is sent again, after
// waiting, under the same duplicate id, until the target took it all, a permanent refusal, or
// the run stops. The outcomes of what was sent are awaited even when ctx ends (within
// drainTimeout), and accepted is called with a context that lasts that long, so that a graceful
// stop settles what the target holds. who names the run and doing what it does ("relaying to
// ...") in the errors.
func (r *Worker) Deliver(ctx context.Context, sender *artemis.Sender, o *Outgoing, who, doing string, accepted func(context.Context, int) error) error {
	for attempt := 0; attempt < 1_000_000; attempt++ {
		retry, err := r.confirmCopies(ctx, o, who, doing, accepted)
		o.sent, o.sends = nil, nil
		if err != nil || len(retry) == 0 {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.WaitForCapacity(ctx); err != nil {
			return err
		}
		if err := Sleep(ctx, Backoff(attempt+1)); err != nil {
			return err
		}
		if err := r.SendCopies(ctx, sender, o, retry); err != nil {
			_, cerr := r.confirmCopies(ctx, o, who, doing, accepted)
			return errors.Join(err, cerr)
		}
	}
	return fmt.Errorf("%s: the target kept refusing messages", who)
}

// confirmCopies waits for the outcomes of o's sent copies, in order, calls accepted for each one
// the target accepted, and returns those to send again.
func (r *Worker) confirmCopies(ctx context.Context, o *Outgoing, who, doing string, accepted func(context.Context, int) error) ([]int, error) {
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
	defer cancel()
	var retry []int
	for j, i := range o.sent {
		err := o.sends[j].Wait(drainCtx)
		if r.Hooks.AfterConfirm != nil {
			r.Hooks.AfterConfirm()
		}
		var oe *artemis.OutcomeError
		switch {
		case err == nil:
			if err := accepted(drainCtx, i); err != nil {
				return nil, err
			}
		case errors.As(err, &oe) && oe.Retryable():
			r.Progress.SetWaiting("waiting: the target refused a message for now (" + oe.Outcome.String() + " " + oe.Condition + "); retrying")
			retry = append(retry, i)
		default:
			return nil, fmt.Errorf("%s: %s: %w", who, doing, err)
		}
	}
	return retry, nil
}
