package core

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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

// slowTargetReport is how long a send or an outcome is awaited before the run reports that it
// waits for the target: a broker compacting its journal or paging answers late, and the run
// goes on waiting (Graces.Confirm), but an operator watching it must see why it stands still.
const slowTargetReport = 10 * time.Second

// untilDrained is a context that lasts as long as ctx and DrainTimeout past ctx's end: a
// running relay waits for the target as long as the run goes on; a stopping one still waits
// a bounded time for what it already sent.
func untilDrained(ctx context.Context) (context.Context, context.CancelFunc) {
	drained, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-drained.Done():
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(DrainTimeout)
		defer t.Stop()
		select {
		case <-drained.Done():
		case <-t.C:
			cancel()
		}
	}()
	return drained, cancel
}

// awaitTarget runs wait (a send waiting for credit, or a send's outcome) with a context of
// drained's bounded by Graces.Confirm, and reports waiting while it takes longer than
// slowTargetReport. A target that answers nothing within Graces.Confirm is taken as gone: the
// error says so.
func (r *Worker) awaitTarget(drained context.Context, what string, wait func(context.Context) error) error {
	waitCtx, cancel := context.WithTimeout(drained, r.Graces.Confirm)
	defer cancel()
	var reported atomic.Bool
	report := time.AfterFunc(slowTargetReport, func() {
		reported.Store(true)
		r.Progress.SetWaiting(fmt.Sprintf("waiting: the target broker %q has not %s for %s (a broker compacting its journal or paging answers late); "+
			"waiting up to %s", r.Target.Name(), what, slowTargetReport, r.Graces.Confirm))
	})
	err := wait(waitCtx)
	if !report.Stop() && reported.Load() {
		r.Progress.SetWaiting("")
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) && drained.Err() == nil {
		return fmt.Errorf("the target broker %q has not %s for %s: check that broker (its log, its disk, its heap): %w",
			r.Target.Name(), what, r.Graces.Confirm, err)
	}
	return err
}

// sendUnlessStopped sends msg unless ctx has ended. Once sent, the send itself is not cut short
// by ctx: go-amqp leaves a send whose context ends midway in an unknown state, possibly on the
// target with no outcome to await, so a stopping relay could neither settle its staged copy nor
// count it. The send waits for credit and an in-flight slot as long as the run goes on: drained
// is ctx's untilDrained, made once per batch (DrainTimeout past the stop, Graces.Confirm at most).
func (r *Worker) sendUnlessStopped(ctx, drained context.Context, s *artemis.Sender, msg *amqp.Message) (*artemis.PendingSend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var p *artemis.PendingSend
	err := r.awaitTarget(drained, "granted credit to send a message", func(ctx context.Context) error {
		var err error
		p, err = s.Send(ctx, msg)
		return err
	})
	return p, err
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
	drained, cancel := untilDrained(ctx)
	defer cancel()
	for _, i := range indexes {
		if err := r.pace.wait(ctx); err != nil {
			return err
		}
		if r.Hooks.BeforeSend != nil {
			r.Hooks.BeforeSend()
		}
		p, err := r.sendUnlessStopped(ctx, drained, sender, o.Copies[i])
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
	// Not DrainTimeout while the run goes on: a target busy with its journal or its pages can
	// take longer than that to confirm a message, and the run is not stopping.
	drainCtx, cancel := untilDrained(ctx)
	defer cancel()
	var retry []int
	for j, i := range o.sent {
		err := r.awaitTarget(drainCtx, "confirmed a message", o.sends[j].Wait)
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
