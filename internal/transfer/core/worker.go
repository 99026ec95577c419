package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
)

// Worker is one run (or one return) in this process, of either mode: what both modes' work
// needs. Each mode keeps its own state beside it (a move's expiry window, a copy's browse).
type Worker struct {
	Source, Target *artemis.Client
	Opts           Options
	Graces         Graces
	Run            Run
	Hooks          Hooks
	Progress       *Tracker
	// targetPolicy is the target address's address-full-policy: BLOCK and FAIL make the relay
	// wait for space.
	targetPolicy string
	// targetRouting is the target queue's routing type, named on every message sent to it.
	targetRouting Routing
	// provePending: the next message sent is to be proven to reach the target queue
	// (DeliverFirst).
	provePending bool
	// book records the run in the ledger; nil or empty without one.
	Book *Book
	// heapCheckAfter is when WaitForTargetHeap next reads the target.
	heapCheckAfter time.Time
	// pace keeps the sends to Options.MaxMessagesPerSecond; nil without a cap.
	pace *pacer
}

// ReadTarget reads, before relaying, what the relay needs of the target: its address's full
// policy and its queue's routing type.
func (r *Worker) ReadTarget(ctx context.Context) error {
	settings, err := r.Target.AddressSettings(ctx, r.Run.Spec.Target.Address)
	if err != nil {
		return err
	}
	r.targetPolicy = settings.AddressFullPolicy
	q, err := r.Target.Queue(ctx, r.Run.Spec.Target.Queue)
	if err != nil {
		return fmt.Errorf("reading the target queue %s before relaying: %w", r.Run.Spec.Target, err)
	}
	if r.targetRouting, err = routingOf(q.RoutingType); err != nil {
		return fmt.Errorf("target queue %s: %w", r.Run.Spec.Target, err)
	}
	return nil
}

// OutgoingCopy is the package's outgoingCopy to the run's target queue, as ReadTarget read it.
func (r *Worker) OutgoingCopy(staged *amqp.Message, duplicateID string, expiresAt int64) *amqp.Message {
	return outgoingCopy(staged, duplicateID, expiresAt, r.targetRouting)
}

// UnderLease runs work, the run's work in this process, under book, the run's bookkeeping: the
// book's lease is renewed while work runs, and a lease lost to another process cancels work's
// context at once (this process must stop working on the run: doing says what it stops, in the
// error). Then the book records how the run ended and frees its lease.
func (r *Worker) UnderLease(ctx context.Context, book *Book, doing string, work func(context.Context) (Result, error)) (Result, error) {
	r.Book, book.Progress = book, r.Progress
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	book.renew(runCtx, cancel)
	res, err := work(runCtx)
	if cause := context.Cause(runCtx); errors.Is(cause, ledger.ErrLeaseLost) {
		err = fmt.Errorf("%w; this process stopped %s", cause, doing)
	}
	book.End(ctx, r.Progress, endStatus(err), err)
	return res, err
}
