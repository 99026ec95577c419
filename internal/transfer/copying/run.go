package copying

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// A copy run in this process: found in (or created in) the ledger, fenced by the ledger's
// lease, then the source queue is browsed from its head and every selected message the ledger
// does not record is sent to the target (walk). Nothing is written to the source
// broker: a copy keeps no staging queue and no manifest there, so it needs only browse on the
// source queue. The ledger is the run's only record: its row (id, spec key, t0, mode copy,
// status, the nodes it is pinned to) and the identities it copied.
// recordingLedger is the engine's copyLedger, or errCopyNeedsLedger.
func (e *Copier) recordingLedger() (copyLedger, error) {
	cl, ok := e.setup.Bookkeeper.(copyLedger)
	if !ok || cl == nil {
		return nil, errCopyNeedsLedger
	}
	return cl, nil
}

// copy is Copy with the hooks to use.
func (e *Copier) copy(ctx context.Context, spec core.Spec, h core.Hooks) (core.Result, error) {
	cl, err := e.recordingLedger()
	if err != nil {
		return core.Result{}, err
	}
	if err := validateCopySpec(spec); err != nil {
		return core.Result{}, err
	}
	runs, err := e.unfinishedCopies(ctx, cl, spec.Key())
	if err != nil {
		return core.Result{}, err
	}
	switch len(runs) {
	case 0:
		return e.startCopy(ctx, spec, h)
	case 1:
		res, err := e.resumeCopy(ctx, runs[0], spec, h)
		var held *ledger.LeaseHeldError
		if errors.As(err, &held) {
			// Another apply's process is copying this transfer (it recorded the run after this
			// apply's plan): this apply waits for that copy and completes with it, as when both
			// record at the same moment. Refused instead, the operator's next apply would find
			// that copy finished and copy the transfer a second time.
			return e.joinCopy(ctx, spec, h, &ledger.UnfinishedCopyError{RunID: runs[0].RunID, Holder: held.Holder})
		}
		return res, err
	default:
		ids := make([]string, len(runs))
		for i, r := range runs {
			ids[i] = r.RunID
		}
		return core.Result{}, fmt.Errorf("%d unfinished copies of this transfer in the transfer ledger (%s): resume or abandon them one at a time",
			len(runs), strings.Join(ids, ", "))
	}
}

// validateCopySpec is Spec.Validate for a copy.
func validateCopySpec(spec core.Spec) error {
	if spec.Mode != core.ModeCopy {
		return fmt.Errorf("mode %q: a copy runs a spec of mode %q", spec.Mode, core.ModeCopy)
	}
	return spec.Validate()
}

// unfinishedCopies reads the unfinished copies of a spec key, waiting out a brief outage of
// the ledger within the retry budget.
func (e *Copier) unfinishedCopies(ctx context.Context, cl copyLedger, key string) ([]CopyRun, error) {
	var runs []CopyRun
	err := ledger.RetryWithin(ctx, e.setup.Options.WithDefaults().RetryBudget, func(ctx context.Context) error {
		attempt, cancel := context.WithTimeout(ctx, core.BookWriteTimeout)
		defer cancel()
		var err error
		runs, err = cl.UnfinishedCopies(attempt, key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("looking up unfinished copies of transfer %s in the transfer ledger: %w", key, err)
	}
	return runs, nil
}

// startCopy starts a new copy at t0 = now: the refusal rules first, then the run's ledger row
// and lease, then the copying.
func (e *Copier) startCopy(ctx context.Context, spec core.Spec, h core.Hooks) (core.Result, error) {
	if err := e.setup.Check(ctx, spec, e.Preflight); err != nil {
		return core.Result{}, err
	}
	m, _, err := e.setup.NewRun(ctx, spec)
	if err != nil {
		return core.Result{}, err
	}
	m.CopyIdentity = currentIdentity
	if e.beforeRecording != nil {
		e.beforeRecording()
	}
	book, err := e.setup.OpenBook(ctx, m, core.BookNew)
	var claimed *ledger.UnfinishedCopyError
	if errors.As(err, &claimed) {
		return e.joinCopy(ctx, spec, h, claimed)
	}
	var held *ledger.LeaseHeldError
	if errors.As(err, &held) {
		// Another apply started this copy in the same millisecond (the run id is the transfer's
		// key and t0 in milliseconds), recorded the same run first and holds it: join it.
		return e.joinCopy(ctx, spec, h, &ledger.UnfinishedCopyError{RunID: m.RunID, Holder: held.Holder})
	}
	if err != nil {
		return core.Result{}, err
	}
	return e.executeCopy(ctx, m, false, h, book)
}

// joinPoll is how often a copy that met another apply's copy of the same transfer looks
// again whether that copy has ended or been freed.
const joinPoll = 2 * time.Second

// joinCopy is a new copy of spec that met claimed, the unfinished copy of the same transfer
// that another process recorded between this one's look-up and its own record (two applies of
// one copy at the same moment), or works on while this one would resume it. It records nothing of its own, so nothing is copied twice: it
// waits for that copy while its process works on it, resumes it when nobody does, and once it
// has completed returns its result (Resumed, nothing copied by this process). It waits as long
// as ctx lets it; then the error matches core.ErrRunBusy and names the run and its holder.
func (e *Copier) joinCopy(ctx context.Context, spec core.Spec, h core.Hooks, claimed *ledger.UnfinishedCopyError) (core.Result, error) {
	cl, err := e.recordingLedger()
	if err != nil {
		return core.Result{}, err
	}
	runID, holder := claimed.RunID, claimed.Holder
	for {
		runs, err := e.unfinishedCopies(ctx, cl, spec.Key())
		if err != nil {
			return core.Result{}, err
		}
		var run *CopyRun
		for i := range runs {
			if runs[i].RunID == runID || runID == "" {
				run = &runs[i]
				break
			}
		}
		if run == nil {
			return e.joinedCopy(ctx, cl, runID)
		}
		runID = run.RunID
		if run.Holder == "" {
			res, err := e.resumeCopy(ctx, *run, spec, h)
			if !errors.Is(err, core.ErrRunBusy) {
				return res, err
			}
		} else {
			holder = run.Holder
		}
		select {
		case <-ctx.Done():
			return core.Result{}, fmt.Errorf("this copy was not started: another apply (%s) is copying the same transfer as run %s, "+
				"and this one waited for it until it ran out of time; once that apply has finished, adopt its run into this configuration "+
				"with terraform import (import id <source broker>/%s) rather than apply again, which would copy the transfer a second time: %w",
				holder, runID, runID, core.ErrRunBusy)
		case <-time.After(joinPoll):
		}
	}
}

// joinedCopy is the result of run runID, the copy another apply ran while this one waited:
// this apply's copy too, when it completed.
func (e *Copier) joinedCopy(ctx context.Context, cl copyLedger, runID string) (core.Result, error) {
	var run CopyRun
	err := ledger.RetryWithin(ctx, e.setup.Options.WithDefaults().RetryBudget, func(ctx context.Context) error {
		var err error
		run, err = cl.ReadCopyRun(ctx, runID)
		return err
	})
	status, copied := run.Status, run.Copied
	if err != nil {
		return core.Result{}, fmt.Errorf("reading copy run %s, which another apply ran while this one waited, from the transfer ledger: %w", runID, err)
	}
	if status != string(ledger.StatusCompleted) {
		return core.Result{}, fmt.Errorf("this copy was not started: another apply started copy run %s of the same transfer at the same moment, "+
			"and that run is %s now; apply again to copy the transfer: %w", runID, status, core.ErrRunBusy)
	}
	_, t0, _ := core.ParseRunID(runID)
	return core.Result{RunID: runID, T0: t0, RelayedTotal: copied, Resumed: true}, nil
}

// resumeCopy finishes run, an unfinished copy of spec recorded in the ledger, with its t0 and
// its nodes. The brokers may have changed since it began: the rest of it meets the same rules
// as a new copy.
func (e *Copier) resumeCopy(ctx context.Context, run CopyRun, spec core.Spec, h core.Hooks) (core.Result, error) {
	if err := e.setup.Check(ctx, spec, e.Preflight); err != nil {
		return core.Result{}, fmt.Errorf("copy run %s is not resumed (what it copied stays on the target; the source was never touched): %w", run.RunID, err)
	}
	if err := e.setup.ResolveAddresses(ctx, &spec); err != nil {
		return core.Result{}, err
	}
	m := core.Run{RunID: run.RunID, T0: run.T0, Spec: spec, SourceNodeID: run.SourceNodeID, TargetNodeID: run.TargetNodeID,
		CopyIdentity: run.IdentityVersion}
	book, err := e.setup.OpenBook(ctx, m, core.BookResume)
	if err != nil {
		return core.Result{}, err
	}
	return e.executeCopy(ctx, m, true, h, book)
}

// executeCopy copies under the run's lease and records how the run ended.
func (e *Copier) executeCopy(ctx context.Context, m core.Run, resumed bool, h core.Hooks, book *core.Book) (core.Result, error) {
	cl, err := e.recordingLedger()
	if err != nil {
		return core.Result{}, err
	}
	r := e.setup.NewWorker(m, h, core.PhaseRelaying)
	// The ledger's relayed counter of a copy is its number of recorded identities (RecordCopied
	// keeps it so): this process counts on from what earlier ones recorded.
	r.Progress.ContinueAfter(book.FlushedTotal, nil)
	c := newCopier(r, cl, !resumed)
	if !resumed {
		r.ProveFirstDelivery()
	}
	res, err := r.UnderLease(ctx, book, "working on it", func(ctx context.Context) (core.Result, error) {
		e.measureCopySelection(ctx, r)
		stopBeat := r.Progress.Beat(ctx)
		defer stopBeat()
		return c.work(ctx)
	})
	res.Resumed = resumed
	return res, err
}

// measureCopySelection tells progress how much of the selection is left to copy: what the
// source holds of it now (a count, capped for a filter on a deep queue) less what earlier
// processes recorded, since the source still holds what they copied.
func (e *Copier) measureCopySelection(ctx context.Context, r *core.Worker) {
	_, before, _ := r.Progress.Relayed.Counts()
	src, err := e.setup.Source.Queue(ctx, r.Run.Spec.Source.Queue)
	if err != nil {
		r.Progress.ExpectSelection(0, 0, core.CountAtLeast)
		return
	}
	f := preflight.Facts{SourceQueue: &src, SelectionCount: -1}
	switch err := e.setup.CountSelection(ctx, r.Run.Spec, &f); {
	case err != nil || f.FilterError != "" || f.SelectionCount < 0:
		r.Progress.ExpectSelection(0, 0, core.CountAtLeast)
	case f.SelectionCountCapped:
		r.Progress.ExpectSelection(0, f.SelectionCount-before, core.CountAtLeast)
	default:
		r.Progress.ExpectSelection(0, f.SelectionCount-before, core.CountEstimate)
	}
}

// work copies the selection and marks the run completed.
func (c *copier) work(ctx context.Context) (core.Result, error) {
	res := core.Result{RunID: c.Run.RunID, T0: c.Run.T0}
	if err := c.ReadTarget(ctx); err != nil {
		return res, c.stopped(ctx, &res, err)
	}
	if err := c.copyAll(ctx); err != nil {
		return res, c.stopped(ctx, &res, err)
	}
	c.Progress.SetPhase(core.PhaseFinishing)
	if err := c.Book.Complete(ctx, c.Progress, core.StatusCompleted); err != nil {
		return res, c.stopped(ctx, &res, err)
	}
	c.fill(&res)
	return res, nil
}

// stopped fills res for a copy that ends early and says how to continue.
func (c *copier) stopped(ctx context.Context, res *core.Result, cause error) error {
	c.fill(res)
	if errors.Is(cause, core.ErrRunBusy) {
		return cause // the other process owns the run; nothing to add
	}
	if errors.Is(cause, core.ErrTargetDiscards) {
		// The first message of a new run: nothing of it is recorded or on the target, and the
		// run ends failed, so the next apply copies as a new run with duplicate ids unspent.
		return fmt.Errorf("copy run %s stopped before copying anything: the source queue %s is untouched, and %w; "+
			"find and remove what drops messages sent to %s, then apply again, which copies as a new run: %w",
			c.Run.RunID, c.Run.Spec.Source, core.ErrRunAbandoned, c.Run.Spec.Target, cause)
	}
	err := fmt.Errorf("copy run %s stopped after copying %d messages (%d by every process): the source queue %s is untouched and the "+
		"transfer ledger records what was copied, so nothing is lost or doubled, and running the same copy again resumes it: %w",
		c.Run.RunID, res.Relayed, res.RelayedTotal, c.Run.Spec.Source, cause)
	if core.Resumable(ctx, cause) {
		return fmt.Errorf("%w: %w", core.ErrInterrupted, err)
	}
	return err
}

// fill copies what this process did into res.
func (c *copier) fill(res *core.Result) {
	c.Progress.Fill(res)
	c.fillCopyCounts(res)
}

// resumeCopyByID finishes the unfinished copy runID of spec, as the ledger records it. runID
// must be a run of spec (the same spec key); a run the ledger has as finished, or not at all,
// gives an error matching core.ErrNoSuchRun. Errors otherwise as for Copy.
func (e *Copier) resumeCopyByID(ctx context.Context, runID string, spec core.Spec, h core.Hooks) (core.Result, error) {
	cl, err := e.recordingLedger()
	if err != nil {
		return core.Result{}, err
	}
	if err := validateCopySpec(spec); err != nil {
		return core.Result{}, err
	}
	key, _, err := core.ParseRunID(runID)
	if err != nil {
		return core.Result{}, err
	}
	if key != spec.Key() {
		return core.Result{}, fmt.Errorf("run %s is not a copy of %s to %s with this selection (its transfer key is %s, this one's %s)",
			runID, spec.Source, spec.Target, key, spec.Key())
	}
	run, err := e.findUnfinishedCopy(ctx, cl, runID)
	if err != nil {
		return core.Result{}, err
	}
	return e.resumeCopy(ctx, run, spec, h)
}

// findUnfinishedCopy reads one unfinished copy from the ledger, or core.ErrNoSuchRun.
func (e *Copier) findUnfinishedCopy(ctx context.Context, cl copyLedger, runID string) (CopyRun, error) {
	key, _, err := core.ParseRunID(runID)
	if err != nil {
		return CopyRun{}, err
	}
	runs, err := e.unfinishedCopies(ctx, cl, key)
	if err != nil {
		return CopyRun{}, err
	}
	for _, r := range runs {
		if r.RunID == runID {
			return r, nil
		}
	}
	return CopyRun{}, fmt.Errorf("copy run %s: the transfer ledger has it as finished (completed or abandoned) or not at all: %w", runID, core.ErrNoSuchRun)
}

// abandonCopy ends an unfinished copy without finishing it: the ledger records it as abandoned;
// what it already copied stays on the target, and the source was never touched. A copy another
// process is running is refused (core.ErrRunBusy), naming that process. A run the ledger has as finished, or not at all,
// is left as it is: there is nothing to abandon.
func (e *Copier) abandonCopy(ctx context.Context, runID string) error {
	cl, err := e.recordingLedger()
	if err != nil {
		return err
	}
	if _, err := e.findUnfinishedCopy(ctx, cl, runID); errors.Is(err, core.ErrNoSuchRun) {
		return nil
	} else if err != nil {
		return err
	}
	key, t0, _ := core.ParseRunID(runID)
	b := core.NewBook(cl, runID, e.setup.Options.WithDefaults().RetryBudget)
	if err := b.TakeLease(ctx); err != nil {
		var held *ledger.LeaseHeldError
		if errors.As(err, &held) {
			return fmt.Errorf("copy run %s (transfer %s, t0 %s) is not abandoned: %w: %w", runID, key, t0.Format(time.RFC3339), core.ErrRunBusy, held)
		}
		return err
	}
	defer b.Release(ctx)
	return b.Write(ctx, func(ctx context.Context) error {
		return cl.SetStatus(ctx, runID, b.Holder, string(ledger.StatusAbandoned), map[string]any{"by": b.Holder})
	})
}

// copyRunsFromLedger maps the ledger's copy runs to the engine's, for a copyLedger over
// *ledger.Ledger. A lease that has expired, or whose holder's process has ended, names no
// holder: nobody works on the run.
func copyRunsFromLedger(runs []ledger.Run) []CopyRun {
	out := make([]CopyRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, copyRunFromLedger(r))
	}
	return out
}

// copyRunFromLedger is copyRunsFromLedger for one run.
func copyRunFromLedger(r ledger.Run) CopyRun {
	c := CopyRun{RunID: r.ID, T0: r.T0, Status: string(r.Status), Copied: r.Counters.Relayed,
		Source: core.Endpoint{Broker: r.SourceBroker, Queue: r.SourceQueue}, Target: core.Endpoint{Broker: r.TargetBroker, Queue: r.TargetQueue},
		Filter: r.Filter, SelectedIDs: r.SelectedIDs,
		SourceNodeID: r.SourceNodeID, TargetNodeID: r.TargetNodeID, IdentityVersion: r.CopyIdentity}
	if r.Lease != nil && r.Lease.ExpiresAt.After(time.Now()) && !r.Lease.HolderGone {
		c.Holder, c.HeldSince = r.Lease.Holder, r.Lease.TakenAt
	}
	return c
}
