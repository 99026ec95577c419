package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
)

// Bookkeeper records runs in an external ledger (PostgreSQL, see internal/ledger): who started
// which run, its counters, its events, and a lease that fences it to one process at a time.
// Engine.Bookkeeper nil means no ledger: the staging queue on the source broker is then the
// run's only record, and moves work as without one.
//
// Errors: an outage of the ledger matches ledger.ErrUnavailable (the run waits, then stops as
// interrupted); TakeLease refuses a run another process holds with a *ledger.LeaseHeldError;
// RenewLease and AddCounters fail with ledger.ErrLeaseLost once another process took the run.
type Bookkeeper interface {
	// CreateRun records a new run, with its "created" event, before anything moves. A run
	// already recorded fails with ledger.ErrRunExists.
	CreateRun(ctx context.Context, run BookedRun) error
	// RunCounts reads a run's counters; found is false when the ledger has no such run (one
	// begun without a ledger).
	RunCounts(ctx context.Context, runID string) (counts BookedCounts, found bool, err error)
	TakeLease(ctx context.Context, runID, holder string, ttl time.Duration) error
	RenewLease(ctx context.Context, runID, holder string, ttl time.Duration) error
	ReleaseLease(ctx context.Context, runID, holder string) error
	// AddCounters adds delta to the run's counters, fenced by holder's lease, at most once for
	// holder's write number seq (1 up; a retry of a write that had committed adds nothing).
	AddCounters(ctx context.Context, runID, holder string, seq int64, delta BookedCounts) error
	// SetStatus moves the run to status ("running" appends "resumed") with detail in the event,
	// fenced by holder's lease like AddCounters: a process that lost the run cannot mark it
	// failed after another finished it.
	SetStatus(ctx context.Context, runID, holder, status string, detail map[string]any) error
}

// BookedRun is what the ledger records of a new run.
type BookedRun struct {
	ID      string
	SpecKey string
	Mode    Mode
	Source  Endpoint
	Target  Endpoint
	// Filter is the selection's filter; SelectedIDs how many message ids an id selection names.
	Filter      string
	SelectedIDs int
	T0          time.Time
	// SourceNodeID and TargetNodeID are the broker nodes the run is pinned to; a copy, which
	// keeps no manifest on the source broker, reads them back from the ledger when it resumes.
	SourceNodeID, TargetNodeID string
	// CopyIdentity is a copy's message identity version (0 for a move).
	CopyIdentity int
}

// BookedCounts are counter deltas of a run.
type BookedCounts struct {
	Staged, Relayed, Resent, Returned int64
}

func (c BookedCounts) zero() bool { return c == BookedCounts{} }

// The statuses the engine sets (those of ledger.Status).
const (
	statusRunning     = "running"
	StatusInterrupted = "interrupted"
	StatusCompleted   = "completed"
	StatusReturned    = "returned"
	StatusFailed      = "failed"
	statusAbandoned   = "abandoned"
)

// ErrRunAbandoned wraps the error of a copy that ended before it recorded anything a later
// run must carry on from: the ledger records it abandoned, and the next apply of its transfer
// starts a new run.
var ErrRunAbandoned = errors.New("the run is abandoned")

const (
	// leaseTTL is how long a run's ledger lease lasts unless renewed; it is renewed every
	// third of it, so a process that dies frees its run within leaseTTL.
	leaseTTL = 90 * time.Second
	// BookWriteTimeout bounds one ledger write, so a server that hangs instead of refusing
	// holds the relay no longer than this before the write is retried.
	BookWriteTimeout = 10 * time.Second
)

// Book is one run's bookkeeping in this process. With no Bookkeeper every method does
// nothing. It is safe for concurrent use (staging and relaying overlap).
type Book struct {
	bk     Bookkeeper
	runID  string
	Holder string
	// budget is how long a write retries an unreachable ledger (a time.Duration): the run's
	// retry budget, at least one whole write once the run has stopped (end).
	budget   atomic.Int64
	Progress *Tracker // where waiting for the ledger is reported; may be nil

	mu sync.Mutex
	// flushed is what this process has added to the run's staged, resent and returned
	// counters. The relayed counter follows the run's total instead (see addBatch):
	// flushedTotal is what the ledger holds, counting stops false until the relay's tally
	// counts on from the broker's records (startCounting).
	flushed      BookedCounts
	FlushedTotal int64
	counting     bool
	// writes numbers this process's counter writes (AddCounters' seq); unsent is the last
	// write when it failed: it may have committed all the same, so it is sent again, under its
	// number, before anything newer (the ledger adds it once).
	writes int64
	unsent *counterWrite
	// stopRenew ends the lease renewal started by renew.
	stopRenew func()
}

// newHolder names a lease holder: host, pid and 128 random bits no other process shares.
func newHolder() string { return ledger.NewHolder() }

// BookPurpose is why a process opens a run's book.
type BookPurpose int

const (
	BookNew    BookPurpose = iota // a new run: recorded before anything moves
	BookResume                    // an unfinished run resumed: recorded if it was not, marked resumed
	BookReturn                    // a run returned: recorded if it was not
)

// NewBook is run runID's bookkeeping in bk (nil: none) for this process, whose writes retry an
// unreachable ledger for budget. OpenBook opens a run's; a copy's abandon makes its own.
func NewBook(bk Bookkeeper, runID string, budget time.Duration) *Book {
	b := &Book{bk: bk, runID: runID}
	b.budget.Store(int64(budget))
	if bk != nil {
		b.Holder = newHolder()
	}
	return b
}

// OpenBook records the run and takes its lease before anything moves: a new run is created,
// one an earlier process worked on without a ledger is created now. A resumed run gets its
// "resumed" event. A run another process holds is refused with the holder and since when.
func (e *Setup) OpenBook(ctx context.Context, m Run, purpose BookPurpose) (*Book, error) {
	b := NewBook(e.Bookkeeper, m.RunID, e.Options.WithDefaults().RetryBudget)
	if b.bk == nil {
		return b, nil
	}
	entry := BookedRun{ID: m.RunID, SpecKey: m.Spec.Key(), Mode: m.Spec.Mode, Source: m.Spec.Source, Target: m.Spec.Target,
		Filter: m.Spec.Selection.Filter, SelectedIDs: len(m.Spec.Selection.MessageIDs), T0: m.T0,
		SourceNodeID: m.SourceNodeID, TargetNodeID: m.TargetNodeID, CopyIdentity: m.CopyIdentity}
	if key, t0, err := ParseRunID(m.RunID); err == nil {
		// The run id holds the spec key and t0 even when the manifest is gone (a return without one).
		entry.SpecKey = key
		if entry.T0.IsZero() {
			entry.T0 = t0
		}
	}
	if entry.Mode == "" {
		entry.Mode = ModeMove
	}
	create := purpose == BookNew
	if !create {
		err := b.Write(ctx, func(ctx context.Context) error {
			counts, exists, err := b.bk.RunCounts(ctx, m.RunID)
			create, b.FlushedTotal = !exists, counts.Relayed
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if create {
		if err := b.Write(ctx, func(ctx context.Context) error { return b.bk.CreateRun(ctx, entry) }); err != nil &&
			!errors.Is(err, ledger.ErrRunExists) { // a retried create that had gone through
			return nil, err
		}
	}
	if err := b.TakeLease(ctx); err != nil {
		var held *ledger.LeaseHeldError
		if errors.As(err, &held) {
			return nil, fmt.Errorf("%w: %w", ErrRunBusy, held)
		}
		return nil, err
	}
	if purpose == BookResume {
		if err := b.Write(ctx, func(ctx context.Context) error {
			return b.bk.SetStatus(ctx, m.RunID, b.Holder, statusRunning, map[string]any{"by": b.Holder})
		}); err != nil {
			b.Release(ctx)
			return nil, err
		}
	}
	return b, nil
}

// TakeLease takes the run's lease for this process. A lease still held by a process that has
// ended (killed, crashed, on any host) is taken over at once by the ledger, which tells by the
// holder's ledger session, instead of refusing the run until it lapses (up to leaseTTL): the
// next apply after a kill resumes straight away. A live holder can only be waited out.
func (b *Book) TakeLease(ctx context.Context) error {
	return b.Write(ctx, func(ctx context.Context) error { return b.bk.TakeLease(ctx, b.runID, b.Holder, leaseTTL) })
}

// Write runs one ledger write, each attempt bounded by BookWriteTimeout, retrying an
// unreachable ledger for the retry budget; meanwhile the run reports that it waits.
func (b *Book) Write(ctx context.Context, fn func(context.Context) error) error {
	waiting := false
	err := ledger.RetryWithin(ctx, time.Duration(b.budget.Load()), func(ctx context.Context) error {
		attempt, cancel := context.WithTimeout(ctx, BookWriteTimeout)
		defer cancel()
		err := fn(attempt)
		if err != nil && attempt.Err() != nil && ctx.Err() == nil && !errors.Is(err, ledger.ErrUnavailable) {
			// This attempt timed out: a server that hangs is unreachable too, and is retried.
			err = fmt.Errorf("%w: no answer within %s: %w", ledger.ErrUnavailable, BookWriteTimeout, err)
		}
		if err != nil && !waiting && b.Progress != nil && errors.Is(err, ledger.ErrUnavailable) {
			waiting = true
			b.Progress.SetWaiting("waiting: the transfer ledger (PostgreSQL) is unreachable; the run continues when it is back (" + err.Error() + ")")
		}
		return err
	})
	if waiting && err == nil {
		b.Progress.SetWaiting("")
	}
	if err != nil {
		return fmt.Errorf("run %s: writing to the transfer ledger: %w", b.runID, err)
	}
	return nil
}

// renew renews the lease every third of its ttl until the run ends. A lease lost to another
// process cancels ctx's run through lost: this process must stop working on it at once.
func (b *Book) renew(ctx context.Context, lost func(error)) {
	if b == nil || b.bk == nil {
		return
	}
	renewCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	b.stopRenew = func() { cancel(); <-done }
	go func() {
		defer close(done)
		tick := time.NewTicker(leaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-tick.C:
			}
			attempt, stop := context.WithTimeout(renewCtx, BookWriteTimeout)
			err := b.bk.RenewLease(attempt, b.runID, b.Holder, leaseTTL)
			stop()
			if errors.Is(err, ledger.ErrLeaseLost) {
				lost(fmt.Errorf("run %s: %w", b.runID, err))
				return
			}
			// Other failures (an outage) are retried at the next tick; the fenced counter
			// writes stop the run if another process took it meanwhile.
		}
	}()
}

// AddBatch adds to the run's counters what this process did since the last call: staged,
// relayed, resent and returned, as progress counts them.
func (b *Book) AddBatch(ctx context.Context, p *Tracker) error {
	if b == nil || b.bk == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.unsent != nil {
		if err := b.send(ctx, *b.unsent); err != nil {
			return err
		}
	}
	_, total, resent := p.Relayed.Counts()
	now := BookedCounts{Staged: p.staged.Load(), Resent: resent, Returned: p.returned.Load()}
	delta := BookedCounts{Staged: now.Staged - b.flushed.Staged, Resent: now.Resent - b.flushed.Resent, Returned: now.Returned - b.flushed.Returned}
	// A message whose acknowledgement on the source was lost is counted by the process that
	// relayed it and again by the next one (the broker's records cannot tell): the sum of
	// what each process relayed may exceed the run's total. So the ledger's relayed counter
	// is set to the run's total as the broker's records give it, which counts each once; the
	// first delta of a resumed run may correct what an earlier process added.
	if b.counting {
		delta.Relayed = total - b.FlushedTotal
	}
	if delta.zero() {
		return nil
	}
	b.writes++
	return b.send(ctx, counterWrite{seq: b.writes, delta: delta, now: now, total: total, counting: b.counting})
}

// counterWrite is one numbered write of a run's counters, with what this process had flushed
// once it is applied.
type counterWrite struct {
	seq      int64
	delta    BookedCounts
	now      BookedCounts
	total    int64
	counting bool
}

// send writes w, retrying an unreachable ledger: a retry after a timeout or a reset may repeat
// a write that had committed, which the ledger adds once by its number. A write that fails
// stays unsent, to go again before the next. b.mu is held.
func (b *Book) send(ctx context.Context, w counterWrite) error {
	b.unsent = &w
	if err := b.Write(ctx, func(ctx context.Context) error { return b.bk.AddCounters(ctx, b.runID, b.Holder, w.seq, w.delta) }); err != nil {
		return err
	}
	b.unsent = nil
	b.flushed = w.now
	if w.counting {
		b.FlushedTotal = w.total
	}
	return nil
}

// StartCounting says the relay's tally now counts on from what the broker's records say
// earlier processes relayed, so the run's relayed total can go to the ledger.
func (b *Book) StartCounting() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.counting = true
	b.mu.Unlock()
}

// Complete adds the last counters and marks the run completed (or returned). A run calls it
// before removing its empty staging queue: a ledger that cannot be reached then stops the run
// as interrupted while it can still be found and resumed, rather than leaving a finished run
// recorded as running.
func (b *Book) Complete(ctx context.Context, p *Tracker, status string) error {
	if b == nil || b.bk == nil {
		return nil
	}
	if err := b.AddBatch(ctx, p); err != nil {
		return err
	}
	return b.Write(ctx, func(ctx context.Context) error {
		return b.bk.SetStatus(ctx, b.runID, b.Holder, status, countsDetail(p, nil))
	})
}

// End stops the lease renewal, records how a run that did not complete stopped (interrupted,
// failed) with the counters so far, and releases the lease. It runs on a bounded context of
// its own, since the run's may be over. A run another process holds or took over is not
// written to: its bookkeeping is that process's.
func (b *Book) End(ctx context.Context, p *Tracker, status string, cause error) {
	if b == nil || b.bk == nil {
		return
	}
	if b.stopRenew != nil {
		b.stopRenew()
	}
	if errors.Is(cause, ledger.ErrLeaseLost) {
		return
	}
	// The run has stopped, so these writes hold nothing up: each gets at least one whole
	// attempt even when the retry budget is shorter, so a ledger that was away only briefly
	// still learns how the run ended and that its lease is free.
	budget := max(time.Duration(b.budget.Load()), BookWriteTimeout)
	b.budget.Store(int64(budget))
	own, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*budget)
	defer cancel()
	if status != "" {
		// Best effort: the run stops anyway, and its staging queue is its durable record.
		if err := b.AddBatch(own, p); err == nil {
			_ = b.Write(own, func(ctx context.Context) error {
				return b.bk.SetStatus(ctx, b.runID, b.Holder, status, countsDetail(p, cause))
			})
		}
	}
	b.Release(own)
}

// countsDetail is an event's detail: what this process did, and why the run stopped.
func countsDetail(p *Tracker, cause error) map[string]any {
	relayed, total, resent := p.Relayed.Counts()
	detail := map[string]any{"relayed": relayed, "relayed_total": total, "resent": resent,
		"staged": p.staged.Load(), "returned": p.returned.Load()}
	if cause != nil {
		detail["why"] = cause.Error()
	}
	return detail
}

// Release frees the lease, bounded, whatever happened.
func (b *Book) Release(ctx context.Context) {
	if b == nil || b.bk == nil {
		return
	}
	own, cancel := context.WithTimeout(context.WithoutCancel(ctx), BookWriteTimeout)
	defer cancel()
	_ = b.bk.ReleaseLease(own, b.runID, b.Holder)
}

// endStatus is the ledger status of a run that stopped with err: "" for a run that was not
// this process's to record (another process works on it) or that completed.
func endStatus(err error) string {
	switch {
	case err == nil, errors.Is(err, ErrRunBusy):
		return ""
	case errors.Is(err, ErrInterrupted):
		return StatusInterrupted
	case errors.Is(err, ErrRunAbandoned):
		return statusAbandoned
	default:
		return StatusFailed
	}
}
