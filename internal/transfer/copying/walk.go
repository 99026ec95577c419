package copying

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// A copy browses the source queue over AMQP (a browse-only consumer: nothing is taken, no
// delivery count changes, paged messages are walked in queue order) with the selection's
// filters frozen at t0, and for each batch of browsed messages:
//
//  1. computes each message's identity (messageIdentity) and asks the ledger, in one query,
//     which of them the run has recorded;
//  2. sends the others to the target queue's fully qualified name, pipelined, each with
//     _AMQ_DUPL_ID studio:<runId>:c<identity>;
//  3. once the target confirmed all of them, records their identities in the ledger (one
//     statement, fenced by the run's lease).
//
// A process that dies between 2 and 3 leaves messages on the target that the ledger does not
// record: the next process sends them again under the same duplicate ids, and the target's
// duplicate detection drops them. Two batches are in flight at most (one sent, one awaiting
// its record), so the target's id cache must hold the ids of two batches; the preflight's
// four-batches rule covers it. Memory is bounded by the batch: the ledger, not the process,
// remembers what was copied.
//
// The browser has no end-of-queue signal (artemis.Browser): the copy of a selection ends when
// no message arrives for Options.CopyIdleTimeout. Messages a consumer of the source holds in
// delivery while the browser passes are not seen by it, and so not copied; scheduled messages
// are not seen either.
// copier is one copy run's work in this process.
type copier struct {
	*core.Worker
	ledger copyLedger
	// fresh is true while this process walks a new run for the first time: an identity the
	// ledger already records can then only be an identical message met earlier in this walk.
	fresh bool
	// identity is the run's message identity version (messageIdentityV), as the ledger records it.
	identity int
	// selectorsDone counts the browse selectors walked to their end; a reconnection starts at
	// the next one.
	selectorsDone int
	// skipped counts messages the ledger had recorded (copied by an earlier process or walk);
	// indistinguishable those identical to another message of this walk (copied once).
	skipped, indistinguishable atomic.Int64
}

func newCopier(r *core.Worker, cl copyLedger, fresh bool) *copier {
	identity := r.Run.CopyIdentity
	if identity == 0 {
		identity = identityV1 // a run recorded before identity versions
	}
	return &copier{Worker: r, ledger: cl, fresh: fresh, identity: identity}
}

// fillCopyCounts copies the copy's own counters into res.
func (c *copier) fillCopyCounts(res *core.Result) {
	res.CopySkipped, res.CopyIndistinguishable = c.skipped.Load(), c.indistinguishable.Load()
}

// copyAll copies every selector's messages. A dropped connection is retried until the retry
// budget is spent; the walk then starts again at the head of the selector it was in, skipping
// what the ledger records.
func (c *copier) copyAll(ctx context.Context) error {
	var outageSince time.Time
	for {
		err := c.copyConnected(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if !core.IsConnectionCause(err) {
			return err
		}
		c.fresh = false // what is recorded may now be this process's own work
		if outageSince.IsZero() {
			outageSince = time.Now()
		}
		if time.Since(outageSince) > c.Opts.RetryBudget {
			return fmt.Errorf("copy run %s: a broker stayed unreachable for more than %s: %w", c.Run.RunID, c.Opts.RetryBudget, err)
		}
		c.Progress.SetWaiting("waiting: a broker connection was lost, reconnecting (" + err.Error() + ")")
		if err := core.Sleep(ctx, 2*time.Second); err != nil {
			return err
		}
	}
}

// copyConnected copies over one pair of connections, selector by selector.
func (c *copier) copyConnected(ctx context.Context) error {
	src, err := c.ConnectSource(ctx)
	if err != nil {
		return err
	}
	defer src.Close()
	tgt, err := c.ConnectTarget(ctx)
	if err != nil {
		return err
	}
	defer tgt.Close()
	// The same target string on every attempt: the target keeps its duplicate-id cache per
	// address string.
	sender, err := tgt.NewSender(ctx, c.Run.Spec.Target.FQQN(), artemis.SenderOptions{MaxInFlight: min(2*c.Opts.BatchSize, artemis.MaxCredit), AllowNonDurable: true,
		Name: core.RelayLinkName(core.ModeCopy, c.Run.RunID, c.Opts.BatchSize)})
	if err != nil {
		return err
	}
	defer sender.Close(context.WithoutCancel(ctx))
	c.Progress.SetWaiting("")
	c.Progress.Note("copying: connected to source " + core.ConnectedTo(src) + " and target " + core.ConnectedTo(tgt))
	credit, err := c.browseCredit(ctx)
	if err != nil {
		return err
	}
	selectors := copySelectors(c.Run.Spec.Selection, c.Run.T0)
	for ; c.selectorsDone < len(selectors); c.selectorsDone++ {
		if err := c.copySelector(ctx, src, sender, selectors[c.selectorsDone], credit); err != nil {
			return err
		}
	}
	return nil
}

// maxSelectorLength bounds one browse selector: a link's filter travels in its attach frame.
const maxSelectorLength = 16 << 10

// copySelectors are the browse selectors of a selection frozen at t0: a filter or whole-queue
// selection's one stage filter, or an id selection's ids packed into selectors of up to
// maxSelectorLength, as few as fit, since each browse ends by waiting out the idle timeout.
func copySelectors(sel core.Selection, t0 time.Time) []string {
	if len(sel.MessageIDs) == 0 {
		return sel.StageFilters(t0)
	}
	return sel.MessageIDFilters(maxSelectorLength)
}

// browseCredit sizes the browser's prefetch: two batches, and never more bytes than the
// in-flight limit allows at the source queue's average message size.
func (c *copier) browseCredit(ctx context.Context) (int, error) {
	credit := min(2*c.Opts.BatchSize, artemis.MaxCredit)
	q, err := c.Source.Queue(ctx, c.Run.Spec.Source.Queue)
	if err != nil {
		return 0, fmt.Errorf("copy run %s: reading source queue %s: %w", c.Run.RunID, c.Run.Spec.Source, err)
	}
	if q.MessageCount > 0 && q.PersistentSize > 0 {
		avg := max(q.PersistentSize/q.MessageCount, 1)
		credit = int(min(int64(credit), max(c.Opts.MaxInFlightBytes/core.HeldCopies/avg, 1)))
	}
	return credit, nil
}

// copyBatch is a batch of browsed messages on its way to the target.
type copyBatch struct {
	core.Outgoing
	ids    []int64
	idSet  map[int64]bool
	expiry []bool // whether each copy carries its original's expiry
	// confirmed marks the copies the target accepted, recorded those the ledger has.
	confirmed, recorded []bool
}

// copySelector walks one browse selector to its end, two batches in flight at most.
func (c *copier) copySelector(ctx context.Context, src *artemis.Connection, sender *artemis.Sender, selector string, credit int) error {
	// Read before the browser attaches: a message that leaves the queue once the browser may
	// have delivered it must show in the counters (walkEnded).
	walk := c.startWalk(ctx)
	b, err := src.NewBrowser(ctx, c.Run.Spec.Source.FQQN(), artemis.BrowserOptions{Credit: credit, Selector: selector,
		IdleTimeout: c.Opts.CopyIdleTimeout})
	if err != nil {
		return fmt.Errorf("copy run %s: %w", c.Run.RunID, err)
	}
	defer b.Close(context.WithoutCancel(ctx))
	var prev *copyBatch
	finishPrev := func() error {
		if prev == nil {
			return nil
		}
		err := c.finishCopyBatch(ctx, sender, prev)
		prev = nil
		return err
	}
	for {
		browsed, end, err := c.browseBatch(ctx, b, &walk)
		if err != nil {
			return errors.Join(err, finishPrev())
		}
		if len(browsed) > 0 {
			cb, err := c.prepareCopyBatch(ctx, browsed, prev)
			if err != nil {
				return errors.Join(err, finishPrev())
			}
			rest := core.AllIndexes(len(cb.Copies))
			if len(rest) > 0 && c.ProofPending() {
				// The run's first copy goes alone, proven to reach the target queue before it
				// is recorded; nothing is in flight before it.
				if err := errors.Join(finishPrev(), c.copyFirst(ctx, sender, cb)); err != nil {
					return err
				}
				rest = rest[1:]
			}
			if len(rest) > 0 {
				// Paused before the send, the batch is only browsed: a run that stops here has
				// nothing of it to settle.
				if err := c.WaitForTargetHeap(ctx); err != nil {
					return errors.Join(err, finishPrev())
				}
				serr := c.SendCopies(ctx, sender, &cb.Outgoing, rest)
				// The previous batch is confirmed and recorded while this one is on its way.
				if perr := finishPrev(); perr != nil || serr != nil {
					return errors.Join(serr, perr, c.finishCopyBatch(ctx, sender, cb))
				}
				prev = cb
			}
		}
		if end {
			return finishPrev()
		}
	}
}

// copyQuietPoll is how long a copy's browse waits for a next message before it looks at how
// many messages the source queue holds: long enough for a broker reading pages from disk to go
// on, short enough that the last batch of a run is not held back.
const copyQuietPoll = time.Second

// browseWalk is what one browse selector's walk has seen so far.
type browseWalk struct {
	browsed int64         // messages the browser delivered, copied or not
	quiet   time.Duration // how long no message has arrived
	// removedAtStart is how many messages had left the source queue when the walk began
	// (QueueInfo.MessagesRemoved); -1 when it could not be read.
	removedAtStart int64
}

// browseBatch reads the next browsed messages, up to the batch size and the in-flight byte
// limit; end is true once the walk has reached the end of the queue (walkEnded). A batch is
// handed over as soon as the browse pauses, so the last messages are not held back.
func (c *copier) browseBatch(ctx context.Context, b *artemis.Browser, walk *browseWalk) (batch []*amqp.Message, end bool, err error) {
	var bytes int64
	for len(batch) < c.Opts.BatchSize && bytes < c.Opts.MaxInFlightBytes/core.HeldCopies {
		poll := min(copyQuietPoll, c.Opts.CopyIdleTimeout)
		msg, ok, err := b.NextWithin(ctx, poll)
		if err != nil {
			return nil, false, fmt.Errorf("copy run %s: %w", c.Run.RunID, err)
		}
		if ok {
			walk.browsed++
			walk.quiet = 0
			batch = append(batch, msg)
			bytes += artemis.MessageSize(msg)
			continue
		}
		walk.quiet += poll
		if len(batch) > 0 {
			return batch, false, nil
		}
		if c.walkEnded(ctx, walk) {
			return nil, true, nil
		}
	}
	return batch, false, nil
}

// walkEnded decides, when the browse has paused, whether the walk has reached the end of the
// queue. Artemis gives a browser no end-of-queue signal, so the end is either a pause of
// Options.CopyIdleTimeout, or, sooner, a pause after the browser delivered at least as many
// messages as the queue holds less its scheduled ones (which a browser never sees), while no
// message has left the queue since the walk began: every message now on the queue was then
// on it or came after, so the browser has delivered each one it could. That is the case of a
// whole-queue copy of a queue nobody consumes from or produces to meanwhile. A filter, new
// messages, or a consumer taking messages keep the count out of reach or make it meaningless,
// and the walk waits out the idle timeout instead.
func (c *copier) walkEnded(ctx context.Context, walk *browseWalk) bool {
	if walk.quiet >= c.Opts.CopyIdleTimeout {
		return true
	}
	if walk.removedAtStart < 0 {
		return false
	}
	q, err := c.Source.Queue(ctx, c.Run.Spec.Source.Queue)
	if err != nil {
		return false // the browse's own next call reports a broker gone away
	}
	return q.MessagesRemoved() == walk.removedAtStart && walk.browsed >= q.MessageCount-q.ScheduledCount
}

// startWalk begins a selector's walk: what has left the source queue so far.
func (c *copier) startWalk(ctx context.Context) browseWalk {
	walk := browseWalk{removedAtStart: -1}
	if q, err := c.Source.Queue(ctx, c.Run.Spec.Source.Queue); err == nil {
		walk.removedAtStart = q.MessagesRemoved()
	}
	return walk
}

// prepareCopyBatch leaves out what the ledger records and identities met twice, and makes the
// copies of the rest.
func (c *copier) prepareCopyBatch(ctx context.Context, browsed []*amqp.Message, prev *copyBatch) (*copyBatch, error) {
	ids := make([]int64, 0, len(browsed))
	kept := make([]*amqp.Message, 0, len(browsed))
	seen := make(map[int64]bool, len(browsed))
	for _, msg := range browsed {
		id := messageIdentityV(c.identity, msg)
		if seen[id] || (prev != nil && prev.idSet[id]) {
			// Identical to a message of this batch or of the one in flight: indistinguishable,
			// and copied once.
			c.indistinguishable.Add(1)
			continue
		}
		seen[id] = true
		ids = append(ids, id)
		kept = append(kept, msg)
	}
	var done map[int64]bool
	if err := c.Book.Write(ctx, func(ctx context.Context) error {
		var err error
		done, err = c.ledger.CopiedAmong(ctx, c.Run.RunID, ids)
		return err
	}); err != nil {
		return nil, err
	}
	cb := &copyBatch{idSet: make(map[int64]bool, len(ids))}
	for i, msg := range kept {
		id := ids[i]
		if done[id] {
			if c.fresh {
				c.indistinguishable.Add(1) // only an identical message met earlier can be recorded
			} else {
				c.skipped.Add(1)
			}
			continue
		}
		expiresAt := copyExpiry(msg)
		cb.Copies = append(cb.Copies, c.OutgoingCopy(msg, copyDuplicateID(c.Run.RunID, id), expiresAt))
		cb.ids = append(cb.ids, id)
		cb.idSet[id] = true
		cb.expiry = append(cb.expiry, expiresAt > 0)
	}
	cb.confirmed, cb.recorded = make([]bool, len(cb.ids)), make([]bool, len(cb.ids))
	return cb, nil
}

// copyFirst copies the first message of batch cb, the run's first, with proof that the target
// queue took it (core.Worker.DeliverFirst), and records it. When the target discarded it,
// nothing is recorded and the run stops.
func (c *copier) copyFirst(ctx context.Context, sender *artemis.Sender, cb *copyBatch) error {
	if err := c.DeliverFirst(ctx, sender, &cb.Outgoing, 0, "copy run "+c.Run.RunID, "copying to "+c.Run.Spec.Target.String()); err != nil {
		return err
	}
	cb.confirmed[0] = true
	return c.recordCopyBatch(ctx, cb)
}

// finishCopyBatch waits for the target's outcomes of a batch (deliver: what the target refused
// for now is sent again), and records in the ledger what the target accepted: all of the batch,
// or what it holds when the run stops (a permanent refusal, ctx ending, a send that failed
// midway). A copy never records what was not confirmed.
func (c *copier) finishCopyBatch(ctx context.Context, sender *artemis.Sender, cb *copyBatch) error {
	err := c.Deliver(ctx, sender, &cb.Outgoing, "copy run "+c.Run.RunID, "copying to "+c.Run.Spec.Target.String(),
		func(_ context.Context, i int) error {
			cb.confirmed[i] = true
			return nil
		})
	if err == nil {
		err = ctx.Err() // a stopping run stops here, with what the target holds recorded
	}
	return errors.Join(err, c.recordCopyBatch(ctx, cb))
}

// recordCopyBatch records a batch the target holds in the ledger, fenced by the run's lease,
// and counts it. The write waits out an outage of the ledger within the retry budget; the
// target's duplicate detection covers a process that dies before it is done.
func (c *copier) recordCopyBatch(ctx context.Context, cb *copyBatch) error {
	// Recorded even when the run is stopping (within a bound): the target holds the batch.
	recordCtx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		recordCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), core.DrainTimeout)
		defer cancel()
	}
	var ids []int64
	var at []int
	for i, id := range cb.ids {
		if cb.confirmed[i] && !cb.recorded[i] {
			ids, at = append(ids, id), append(at, i)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := c.Book.Write(recordCtx, func(ctx context.Context) error {
		return c.ledger.RecordCopied(ctx, c.Run.RunID, c.Book.Holder, ids)
	}); err != nil {
		return err
	}
	for _, i := range at {
		cb.recorded[i] = true
		c.Progress.Relayed.Confirmed(cb.ids[i])
		if cb.expiry[i] {
			c.Progress.AddExpiry(core.ExpiryKept)
		}
	}
	c.Progress.Relayed.EndBatch()
	c.Progress.SetWaiting("")
	c.Progress.Report("")
	return nil
}
