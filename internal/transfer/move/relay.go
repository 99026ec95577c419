package move

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// relay moves every staged message to the target. It returns when staging is empty and staging
// is complete, when ctx ends, or on an error that waiting cannot cure. A dropped connection is
// retried until the retry budget is spent; the staged messages in flight return to staging and
// are sent again under the same duplicate id.
func (r *runner) relay(ctx context.Context, staging stagingState) error {
	var outageSince time.Time
	for attempt := 0; ; attempt++ {
		err := r.reattach(ctx, attempt)
		if err == nil {
			err = r.relayConnected(ctx, staging)
		}
		if err == nil || ctx.Err() != nil {
			return err
		}
		// A lost lease may carry the lost connection that revealed it: it ends the relay all the same.
		if !core.IsConnectionCause(err) || errors.Is(err, core.ErrLeaseLost) {
			return err
		}
		if outageSince.IsZero() {
			outageSince = time.Now()
		}
		wrongNode := errors.Is(err, artemis.ErrWrongNode)
		if time.Since(outageSince) > r.Opts.RetryBudget {
			if wrongNode {
				return fmt.Errorf("run %s: for more than %s, the broker's URLs reached only other nodes than the run's: %w", r.Run.RunID, r.Opts.RetryBudget, err)
			}
			return fmt.Errorf("run %s: a broker stayed unreachable for more than %s: %w", r.Run.RunID, r.Opts.RetryBudget, err)
		}
		if wrongNode {
			r.Progress.SetWaiting("waiting: the run's node is not reachable; waiting for it rather than using another node (" + err.Error() + ")")
		} else {
			r.Progress.SetWaiting("waiting: a broker connection was lost, reconnecting (" + err.Error() + ")")
		}
		if err := core.Sleep(ctx, 2*time.Second); err != nil {
			return err
		}
	}
}

// reattach checks, before the relay attaches to staging again after a lost connection, that this
// process still holds the run's lease. The connection that carried the relay may have carried the
// lease too, and while this process waited to reconnect another may have taken the run over: it
// must not take staged messages from that process's run. An unreachable broker is one more
// outage to wait out; the first attach follows the lease taken moments before and is not checked.
func (r *runner) reattach(ctx context.Context, attempt int) error {
	if attempt == 0 {
		return nil
	}
	return r.lease.fence(ctx)
}

// relayConnected relays over one pair of connections until done or an error.
func (r *runner) relayConnected(ctx context.Context, staging stagingState) error {
	links, err := r.openLinks(ctx)
	if err != nil {
		return err
	}
	defer links.close()
	r.Progress.SetWaiting("")
	// Two batches are in flight at most: while one awaits its confirmations, the next is
	// recorded and sent.
	var prev *flight
	finishPrev := func() error {
		if prev == nil {
			return nil
		}
		err := r.finishBatch(ctx, links, prev)
		prev = nil
		return err
	}
	// drainWait, when positive, is the next idle wait: the last batch is confirmed with staging
	// complete, and the run is done once the broker counts its acknowledgements, a moment later.
	// It doubles up to IdleWait while the staging queue still counts messages.
	var drainWait time.Duration
	for {
		if err := ctx.Err(); err != nil {
			return errors.Join(err, finishPrev())
		}
		if r.window.drained(r.Progress.Relayed.Confirmations()) && prev == nil {
			if done, err := r.stagingDrained(ctx, staging); err != nil || done {
				return err
			}
		}
		if err := r.WaitForCapacity(ctx); err != nil {
			return errors.Join(err, finishPrev())
		}
		// With a batch in flight, the next one is not waited for long: confirming the one in
		// flight comes first when nothing more is staged.
		wait, wake := r.Opts.IdleWait, staging.wake()
		if drainWait > 0 {
			wait = min(drainWait, wait)
		}
		if prev != nil {
			wait, wake = batchFillWait, nil
		}
		// The run's first message goes alone, proven to reach the target queue.
		size := r.Opts.BatchSize
		if r.ProofPending() && prev == nil {
			size = 1
		}
		batch, err := r.receiveBatch(ctx, links.receiver, wait, wake, size)
		if err != nil {
			err = errors.Join(err, finishPrev())
			if errors.Is(err, artemis.ErrNotImplemented) {
				// go-amqp cannot decode some AMQP types (char, decimal) that JMS map and stream
				// messages may hold; such a message stays staged.
				return fmt.Errorf("run %s: a staged message holds an AMQP type the relay cannot decode; it stays in %s: return the run to put it back on the source: %w",
					r.Run.RunID, StagingQueue(r.Run.RunID), err)
			}
			return err
		}
		if len(batch) == 0 {
			if prev != nil {
				if err := finishPrev(); err != nil {
					return err
				}
				// The last batch confirmed with staging complete may have been the run's last:
				// see now rather than after an idle wait (a second, most of a small move's time).
				if r.selector != "" || !staging.complete() {
					continue
				}
				drainWait = firstDrainWait
			}
			if r.selector != "" {
				return nil // a selective relay ends when nothing more matches
			}
			done, err := r.stagingDrained(ctx, staging)
			if err != nil || done {
				return err
			}
			drainWait *= 2
			continue
		}
		drainWait = 0
		if len(batch) == 1 && r.ProofPending() && prev == nil {
			if err := r.relayFirst(ctx, links, batch); err != nil {
				return err
			}
			continue
		}
		var prevIDs []int64
		if prev != nil {
			prevIDs = prev.ids
		}
		f, err := r.startBatch(ctx, links, batch, prevIDs)
		// The previous batch is confirmed while this one is on its way.
		if perr := finishPrev(); perr != nil || err != nil {
			if f != nil {
				err = errors.Join(err, r.finishBatch(ctx, links, f))
			}
			return errors.Join(perr, err)
		}
		prev = f
	}
}

// firstDrainWait is the first wait for the broker to count the acknowledgements of a run's last
// batch (see drainWait in relayConnected).
const firstDrainWait = 25 * time.Millisecond

// batchFillWait bounds how long a batch waits for more staged messages once it has one: long
// enough for the broker to refill the prefetch after the last batch's acknowledgements, short
// enough not to hold back the last messages of a run.
const batchFillWait = 20 * time.Millisecond

// receiveBatch waits up to wait for a first staged message, then takes more as they arrive, up
// to size messages and the in-flight byte limit, for at most batchFillWait.
func (r *runner) receiveBatch(ctx context.Context, rcv *artemis.Receiver, wait time.Duration, wake <-chan struct{}, size int) ([]*amqp.Message, error) {
	waitCtx, endWait := context.WithTimeout(ctx, wait)
	if wake != nil {
		// Staging completing ends the wait: the relay then checks whether the run is done
		// rather than idling out the wait (a second, most of a small move's time). A message
		// arriving as the wait ends stays on the link for the next receive. The goroutine
		// ends only this wait: it may run after the wait is over, once the batch is filling.
		go func() {
			select {
			case <-wake:
				endWait()
			case <-waitCtx.Done():
			}
		}()
	}
	first, err := rcv.Receive(waitCtx)
	endWait()
	if err != nil {
		if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
			return nil, nil
		}
		return nil, err
	}
	batch := []*amqp.Message{first}
	bytes := artemis.MessageSize(first)
	fillCtx, cancel := context.WithTimeout(ctx, batchFillWait)
	defer cancel()
	for len(batch) < size && bytes < r.Opts.MaxInFlightBytes {
		msg, err := rcv.TryReceive()
		if err != nil {
			return nil, err
		}
		if msg == nil {
			if msg, err = rcv.Receive(fillCtx); err != nil {
				if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
					break // what has arrived makes the batch
				}
				return nil, err
			}
		}
		batch = append(batch, msg)
		bytes += artemis.MessageSize(msg)
	}
	return batch, nil
}

// stagingDrained reports whether the run is finished: staging complete and the staging queue
// empty. The broker counts messages delivered to us and not yet settled, so an empty count
// after our last accept means nothing is left.
func (r *runner) stagingDrained(ctx context.Context, staging stagingState) (bool, error) {
	if !staging.complete() {
		return false, nil
	}
	q, err := r.Source.Queue(ctx, StagingQueue(r.Run.RunID))
	if err != nil {
		return false, fmt.Errorf("run %s: %w", r.Run.RunID, err)
	}
	if q.MessageCount == 0 {
		return true, nil
	}
	if q.ScheduledCount > 0 && q.ScheduledCount == q.MessageCount {
		r.Progress.Note(fmt.Sprintf("waiting: %d staged messages are scheduled for later delivery", q.ScheduledCount))
	}
	return false, nil
}

// stagingState tells the relay whether staging is complete, and wakes a relay that waits for
// staged messages when it becomes so.
type stagingState struct {
	done <-chan struct{} // closed once staging is complete
}

// stagingIsComplete is the state of a relay that starts with everything staged.
func stagingIsComplete() stagingState {
	done := make(chan struct{})
	close(done)
	return stagingState{done: done}
}

func (s stagingState) complete() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// wake is what a relay waiting for a staged message also waits on: staging completing, or nil
// once it has (waiting for it again would not wait at all).
func (s stagingState) wake() <-chan struct{} {
	if s.complete() {
		return nil
	}
	return s.done
}
