package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// relayLinks are the two links of a relay: the staging receiver and the target sender.
type relayLinks struct {
	srcConn, tgtConn *artemis.Connection
	// journalConn carries the in-flight records on a connection of its own: on the receiver's
	// connection the broker's confirmation of a record would queue behind the prefetched
	// deliveries (megabytes for a two-batch window), which cost tens of milliseconds a batch.
	journalConn *artemis.Connection
	receiver    *artemis.Receiver
	sender      *artemis.Sender
	journal     *artemis.Sender // the in-flight record, on the source
}

// close drops both connections. Staged messages not yet accepted return to staging.
func (l *relayLinks) close() {
	if l.srcConn != nil {
		_ = l.srcConn.Close()
	}
	if l.tgtConn != nil {
		_ = l.tgtConn.Close()
	}
	if l.journalConn != nil {
		_ = l.journalConn.Close()
	}
}

// busyGrace is how long a refused staging consumer is retried: long enough for the broker to
// drop the consumer of a process that just died.
const busyGrace = 10 * time.Second

// errRunBusy: another process relays the same run (the staging queue admits one consumer).
var errRunBusy = errors.New("another process is relaying this run")

// openLinks connects to both brokers and attaches the receiver (on staging) and the sender (to
// the target queue's fully qualified name, the same string on every attempt, since the target's
// duplicate-id cache is kept per address string).
func (r *runner) openLinks(ctx context.Context) (*relayLinks, error) {
	l := &relayLinks{}
	var err error
	if l.srcConn, err = r.connectSource(ctx); err != nil {
		return nil, err
	}
	if l.tgtConn, err = r.connectTarget(ctx); err != nil {
		l.close()
		return nil, err
	}
	staging := StagingQueue(r.m.RunID)
	// The staging queue admits one consumer. A process that just died may still hold it until
	// the broker notices its closed connection, so a refusal is retried for a short while
	// before the run is taken to belong to another live process.
	for deadline := time.Now().Add(busyGrace); ; {
		l.receiver, err = l.srcConn.NewReceiver(ctx, staging+"::"+staging, r.receiverOptions())
		if err == nil || !isMaxConsumers(err) || time.Now().After(deadline) {
			break
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			l.close()
			return nil, err
		}
	}
	if err != nil {
		l.close()
		if isMaxConsumers(err) {
			return nil, fmt.Errorf("run %s: %w (staging queue %s already has its one consumer)", r.m.RunID, errRunBusy, staging)
		}
		return nil, err
	}
	l.sender, err = l.tgtConn.NewSender(ctx, r.m.Spec.Target.FQQN(), artemis.SenderOptions{MaxInFlight: min(2*r.opts.BatchSize, artemis.MaxCredit), AllowNonDurable: true})
	if err != nil {
		l.close()
		return nil, err
	}
	if l.journalConn, err = r.connectSource(ctx); err != nil {
		l.close()
		return nil, err
	}
	l.journal, err = l.journalConn.NewSender(ctx, manifestFQQN(r.m.RunID), artemis.SenderOptions{MaxInFlight: 1})
	if err != nil {
		l.close()
		return nil, err
	}
	// Says which URL and node each (re)connection reached: after a failover, the log shows it.
	r.report(ctx, "relaying: connected to source "+connectedTo(l.srcConn)+" and target "+connectedTo(l.tgtConn))
	return l, nil
}

// isMaxConsumers recognises the broker's refusal of a consumer beyond a queue's max-consumers
// (AMQ229200 "Maximum Consumer Limit Reached").
func isMaxConsumers(err error) bool {
	return containsAny(err.Error(), "AMQ229200", "Maximum Consumer Limit")
}

// relay moves every staged message to the target. It returns when staging is empty and staging
// is complete, when ctx ends, or on an error that waiting cannot cure. A dropped connection is
// retried until the retry budget is spent; the staged messages in flight return to staging and
// are sent again under the same duplicate id.
func (r *runner) relay(ctx context.Context, stagingComplete func() bool) error {
	var outageSince time.Time
	for {
		err := r.relayConnected(ctx, stagingComplete)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if !artemis.IsConnectionLost(err) && !errors.Is(err, artemis.ErrUnreachable) {
			return err
		}
		if outageSince.IsZero() {
			outageSince = time.Now()
		}
		wrongNode := errors.Is(err, artemis.ErrWrongNode)
		if time.Since(outageSince) > r.opts.RetryBudget {
			if wrongNode {
				return fmt.Errorf("run %s: for more than %s, the broker's URLs reached only other nodes than the run's: %w", r.m.RunID, r.opts.RetryBudget, err)
			}
			return fmt.Errorf("run %s: a broker stayed unreachable for more than %s: %w", r.m.RunID, r.opts.RetryBudget, err)
		}
		if wrongNode {
			r.report(ctx, "waiting: the run's node is not reachable; waiting for it rather than using another node ("+err.Error()+")")
		} else {
			r.report(ctx, "waiting: a broker connection was lost, reconnecting ("+err.Error()+")")
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return err
		}
	}
}

// relayConnected relays over one pair of connections until done or an error.
func (r *runner) relayConnected(ctx context.Context, stagingComplete func() bool) error {
	links, err := r.openLinks(ctx)
	if err != nil {
		return err
	}
	defer links.close()
	r.waiting = ""
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
	for {
		if err := ctx.Err(); err != nil {
			return errors.Join(err, finishPrev())
		}
		if r.drainUntil > 0 && prev == nil && r.tally.confirmations() >= r.drainUntil {
			if done, err := r.stagingDrained(ctx, stagingComplete); err != nil || done {
				return err
			}
		}
		if err := r.waitForCapacity(ctx); err != nil {
			return errors.Join(err, finishPrev())
		}
		// With a batch in flight, the next one is not waited for long: confirming the one in
		// flight comes first when nothing more is staged.
		wait := r.opts.IdleWait
		if prev != nil {
			wait = batchFillWait
		}
		batch, err := r.receiveBatch(ctx, links.receiver, wait)
		if err != nil {
			err = errors.Join(err, finishPrev())
			if strings.Contains(err.Error(), "not implemented") {
				// go-amqp cannot decode some AMQP types (char, decimal) that JMS map and stream
				// messages may hold; such a message stays staged.
				return fmt.Errorf("run %s: a staged message holds an AMQP type the relay cannot decode; it stays in %s: return the run to put it back on the source: %w",
					r.m.RunID, StagingQueue(r.m.RunID), err)
			}
			return err
		}
		if len(batch) == 0 {
			if prev != nil {
				if err := finishPrev(); err != nil {
					return err
				}
				continue
			}
			if r.selector != "" {
				return nil // a selective relay ends when nothing more matches
			}
			done, err := r.stagingDrained(ctx, stagingComplete)
			if err != nil || done {
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

// receiverOptions size the staging receiver's prefetch: three batches (two in flight, the next
// arriving), and never more bytes than the in-flight limit allows. The receiver grants credit
// by the sizes of the messages it actually gets (ReceiverOptions.MaxBytes): a count fixed when
// the link opens, from the queues' average sizes, let a run whose staging had not begun
// prefetch 20 messages of 10 MiB at once (a 341 MiB peak).
func (r *runner) receiverOptions() artemis.ReceiverOptions {
	return artemis.ReceiverOptions{
		Credit:   min(3*r.opts.BatchSize, artemis.MaxCredit),
		MaxBytes: max(r.opts.MaxInFlightBytes/heldCopies, 1),
		Selector: r.selector,
	}
}

// heldCopies is how many times over the relay holds a message it has received and not yet
// settled, for the in-flight byte limit: the frames it arrives in, its decoded body, and its
// encoding for the send (measured: 20 x 10 MiB peaked at 390 MiB when counted once).
const heldCopies = 4

// batchFillWait bounds how long a batch waits for more staged messages once it has one: long
// enough for the broker to refill the prefetch after the last batch's acknowledgements, short
// enough not to hold back the last messages of a run.
const batchFillWait = 20 * time.Millisecond

// receiveBatch waits up to wait for a first staged message, then takes more as they arrive, up
// to the batch size and the in-flight byte limit, for at most batchFillWait.
func (r *runner) receiveBatch(ctx context.Context, rcv *artemis.Receiver, wait time.Duration) ([]*amqp.Message, error) {
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	first, err := rcv.Receive(waitCtx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, nil
		}
		return nil, err
	}
	batch := []*amqp.Message{first}
	bytes := artemis.MessageSize(first)
	fillCtx, cancel := context.WithTimeout(ctx, batchFillWait)
	defer cancel()
	for len(batch) < r.opts.BatchSize && bytes < r.opts.MaxInFlightBytes {
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
func (r *runner) stagingDrained(ctx context.Context, stagingComplete func() bool) (bool, error) {
	if !stagingComplete() {
		return false, nil
	}
	q, err := r.source.Queue(ctx, StagingQueue(r.m.RunID))
	if err != nil {
		return false, fmt.Errorf("run %s: %w", r.m.RunID, err)
	}
	if q.MessageCount == 0 {
		return true, nil
	}
	if q.ScheduledCount > 0 && q.ScheduledCount == q.MessageCount {
		r.report(ctx, fmt.Sprintf("waiting: %d staged messages are scheduled for later delivery", q.ScheduledCount))
	}
	return false, nil
}

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
		expiresAt, known := r.expiries[origin.MessageID]
		switch {
		case known:
			f.expiry[i] = expiryKept
		case r.inExpiryWindow:
			f.expiry[i] = expiryLost // staged from the window, but not the message whose expiry was read
		}
		f.copies[i] = relayCopy(staged, DuplicateID(r.m.RunID, r.m.SourceNodeID, origin.MessageID), expiresAt)
		f.ids[i] = origin.MessageID
	}
	_, total, _ := r.tally.counts()
	record := inFlightRecord{SourceIDs: append(append(make([]int64, 0, len(prevIDs)+len(f.ids)), prevIDs...), f.ids...),
		RelayedBefore: total, Confirmed: r.tally.recentIDs()}
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
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.hooks.BeforeSend != nil {
			r.hooks.BeforeSend()
		}
		p, err := links.sender.Send(ctx, f.copies[i])
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
				r.tally.endBatch()
				r.setWaiting(ctx, "")
				r.report(ctx, "")
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
			if r.tally.confirmed(f.ids[i]) {
				continue // a resend: counted, with its expiry, when it was first confirmed
			}
			switch expiry[i] {
			case expiryKept:
				r.expiryKept.Add(1)
			case expiryLost:
				r.expiryLost.Add(1)
			}
		case errors.As(err, &oe) && oe.Retryable():
			r.setWaiting(ctx, "waiting: the target refused a message for now ("+oe.Outcome.String()+" "+oe.Condition+"); retrying")
			retry = append(retry, i)
		default:
			return nil, fmt.Errorf("run %s: relaying to %s: %w", r.m.RunID, r.m.Spec.Target, err)
		}
	}
	return retry, nil
}

func backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(attempt, 5)
	return min(d, 5*time.Second)
}

// waitForCapacity holds the run while the target address cannot take more: full with policy
// BLOCK or FAIL, or the target broker's global memory full. PAGE and DROP never wait (a DROP
// target is refused before a run starts).
func (r *runner) waitForCapacity(ctx context.Context) error {
	if r.targetPolicy != "BLOCK" && r.targetPolicy != "FAIL" {
		return nil
	}
	for attempt := 0; ; attempt++ {
		usage, err := r.target.AddressUsage(ctx, r.m.Spec.Target.Address)
		if err != nil {
			return fmt.Errorf("run %s: checking the target's capacity: %w", r.m.RunID, err)
		}
		global, err := r.target.GlobalMemoryPercent(ctx)
		if err != nil {
			return fmt.Errorf("run %s: checking the target's capacity: %w", r.m.RunID, err)
		}
		if usage.LimitPercent < 100 && global < 100 {
			if attempt > 0 {
				r.setWaiting(ctx, "")
			}
			return nil
		}
		r.setWaiting(ctx, fmt.Sprintf("waiting: target address %s is full (%s policy, %d%% of its limit, broker memory %d%%)",
			r.m.Spec.Target.Address, r.targetPolicy, usage.LimitPercent, global))
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
