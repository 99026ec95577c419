package move

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Mover runs moves between the two brokers of its setup.
type Mover struct {
	setup *core.Setup
}

// New is a Mover over setup.
func New(setup *core.Setup) *Mover { return &Mover{setup: setup} }

// errQuarantined: the broker dead-lettered staged messages it could not convert for the relay
// into the run's quarantine queue. Resuming cannot help; returning the run can.
var errQuarantined = errors.New("messages in quarantine")

// runner is a move's run (or return) in this process: the runner, with the move's own state.
// window is the staging of expiring messages (stageExpiring); selector a return's settling of
// the in-flight batches (settleInFlight).
type runner struct {
	*core.Worker
	window expiryWindow
	// selector limits the relay to some staged messages (a return relays the in-flight ones).
	selector string
	// lease is this process's hold on the run on the source broker, checked before each call
	// that changes the run's queues; nil until taken.
	lease *runLease
	// owed holds, by source id, the staged messages an earlier process of the run may have put
	// on the target (its last in-flight record's) that this process has not relayed yet. Each
	// in-flight record this process writes lists them too, so that a process that stops before
	// relaying them leaves them recorded for the next: a record that listed only its own batches
	// would let a later return put back on the source messages the target already holds.
	owed map[int64]struct{}
	// stagingMarkedAt is when this process last wrote the run's staging record saying it moves
	// (markStaging); zero when it wrote none, or wrote since that none is outstanding.
	stagingMarkedAt time.Time
	// stagingUnsettled: a staging move of this process ended without its answer.
	stagingUnsettled bool
	// lateMovesBy is until when a staging move of an earlier process of the run may land, from
	// the staging record this process found.
	lateMovesBy time.Time
}

// Move runs spec to the end: it resumes the unfinished run of spec when there is one, else
// starts a new run with t0 = now.
func (e *Mover) Move(ctx context.Context, spec core.Spec) (core.Result, error) {
	return e.move(ctx, spec, e.setup.Hooks)
}

func (e *Mover) move(ctx context.Context, spec core.Spec, h core.Hooks) (core.Result, error) {
	if err := spec.Validate(); err != nil {
		return core.Result{}, err
	}
	if spec.Mode == core.ModeCopy {
		return core.Result{}, fmt.Errorf("mode %q: a copy runs with Copy, which never stages the source's messages", spec.Mode)
	}
	runs, err := e.unfinishedRuns(ctx, &spec)
	if err != nil {
		return core.Result{}, err
	}
	switch len(runs) {
	case 0:
		return e.start(ctx, spec, h)
	case 1:
		return e.finishFound(ctx, runs[0], spec, h)
	default:
		ids := make([]string, len(runs))
		for i, r := range runs {
			ids[i] = r.RunID
		}
		return core.Result{}, fmt.Errorf("%d unfinished runs of this transfer on broker %q (%s): resume or return them one at a time",
			len(runs), e.setup.Source.Name(), strings.Join(ids, ", "))
	}
}

// start creates a new run: the refusal rules first, then the run on the source broker
// (createRun), then the work.
func (e *Mover) start(ctx context.Context, spec core.Spec, h core.Hooks) (core.Result, error) {
	if err := e.setup.Check(ctx, spec, e.Preflight); err != nil {
		return core.Result{}, err
	}
	run, srcInfo, err := e.setup.NewRun(ctx, spec)
	if err != nil {
		return core.Result{}, err
	}
	m := Manifest{FormatVersion: manifestFormatVersion, Run: run, CreatedAt: time.Now().UTC(), CreatedBy: e.setup.Options.CreatedBy}
	// The ledger records the run, and fences it, before anything moves.
	book, err := e.setup.OpenBook(ctx, m.Run, core.BookNew)
	if err != nil {
		return core.Result{}, err
	}
	lease, err := e.createRun(ctx, m, srcInfo.Version, h)
	if err != nil {
		book.End(ctx, core.NewTracker(m.RunID, core.PhaseStaging, nil), core.StatusFailed, err)
		return core.Result{}, err
	}
	return e.execute(ctx, m, false, h, book, lease)
}

// createRun makes a new run on the source broker, in an order that leaves the next apply a run
// it can finish whatever instant this process is killed at (decideRecovery): the manifest queue
// first, so that the run can be found; this process's lease on it, so that no other process
// takes the run for dead; the staging settings; the manifest, which commits the run (from
// then on it is resumed); and only then the staging and quarantine queues, which nothing
// enters before the manifest exists. It returns the lease.
func (e *Mover) createRun(ctx context.Context, m Manifest, version string, h core.Hooks) (lease *runLease, err error) {
	if err := createManifestQueue(ctx, e.setup.Source, m.RunID); err != nil {
		return nil, err
	}
	h.Reach(core.PointManifestQueue)
	lease, err = e.holdLease(ctx, m.RunID, m.SourceNodeID)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lease.release()
		}
	}()
	if err := addStagingSettings(ctx, e.setup.Source, version, m.RunID); err != nil {
		return nil, err
	}
	if err := e.storeManifest(ctx, m); err != nil {
		return nil, err
	}
	h.Reach(core.PointManifestWritten)
	// The manifest queue and the settings are in: only the staging and quarantine queues are
	// left to make.
	if err := createStagingQueues(ctx, e.setup.Source, m.RunID); err != nil {
		return nil, err
	}
	h.Reach(core.PointStagingCreated)
	return lease, nil
}

// storeManifest writes run m's manifest on the run's node of the source broker.
func (e *Mover) storeManifest(ctx context.Context, m Manifest) error {
	conn, err := core.ConnectRunNode(ctx, e.setup.Source, m.RunID, "source", m.SourceNodeID)
	if err != nil {
		return err
	}
	err = writeManifest(ctx, conn, m, artemis.CreditWait{Limit: e.setup.Graces.WithDefaults().Credit})
	_ = conn.Close()
	return err
}

// Resume finishes an unfinished run, found by its id on the source broker. expect, when not
// nil, must describe the same transfer as the run's manifest.
func (e *Mover) Resume(ctx context.Context, runID string, expect *core.Spec) (core.Result, error) {
	return e.resume(ctx, runID, expect, e.setup.Hooks)
}

func (e *Mover) resume(ctx context.Context, runID string, expect *core.Spec, h core.Hooks) (core.Result, error) {
	m, err := e.loadManifest(ctx, runID)
	if err != nil {
		return core.Result{}, err
	}
	if expect != nil && expect.Key() != m.Spec.Key() {
		return core.Result{}, fmt.Errorf("run %s moves %s to %s, not %s to %s", runID, m.Spec.Source, m.Spec.Target, expect.Source, expect.Target)
	}
	// The brokers may have changed since the run began (a DROP policy on the target, duplicate
	// detection turned off): the rest of the run meets the same rules as a new one.
	if err := e.setup.Check(ctx, m.Spec, e.Preflight); err != nil {
		var refused *core.RefusedError
		if errors.As(err, &refused) {
			refused.ResumedRunID, refused.StagingQueue = runID, StagingQueue(runID)
		}
		return core.Result{}, err
	}
	srcInfo, err := e.setup.Source.BrokerInfo(ctx)
	if err != nil {
		return core.Result{}, err
	}
	book, err := e.setup.OpenBook(ctx, m.Run, core.BookResume)
	if err != nil {
		return core.Result{}, err
	}
	if err := ensureStaging(ctx, e.setup.Source, srcInfo.Version, runID); err != nil {
		book.End(ctx, core.NewTracker(runID, core.PhaseStaging, nil), core.StatusInterrupted, err)
		return core.Result{}, err
	}
	return e.execute(ctx, m, true, h, book, nil)
}

// execute stages what is left of the selection, relays it, and removes staging. A resumed run
// first reads what earlier processes recorded: how many they relayed, and the expiry window
// they were staging. lease is the lease on the source broker when this process holds it
// already (a new run takes it as it starts); nil, execute takes it.
func (e *Mover) execute(ctx context.Context, m Manifest, resumed bool, h core.Hooks, book *core.Book, lease *runLease) (core.Result, error) {
	r := &runner{Worker: e.setup.NewWorker(m.Run, h, core.PhaseStaging), lease: lease}
	return r.UnderLease(ctx, book, "working on it", func(ctx context.Context) (core.Result, error) {
		return e.work(ctx, r, resumed)
	})
}

// work is execute's run: the lease on the source broker, what earlier processes did, staging
// and relaying, and the end of staging.
func (e *Mover) work(ctx context.Context, r *runner, resumed bool) (core.Result, error) {
	res := core.Result{RunID: r.Run.RunID, T0: r.Run.T0, Resumed: resumed}
	if err := e.relayUnderLease(ctx, r, resumed); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	r.Progress.Fill(&res)
	return res, nil
}

// relayUnderLease is work's route: the run's lease, what earlier processes did (on a resume),
// the target, staging and relaying, then the run's end. Its first error ends it; work says
// what that leaves and how to continue.
func (e *Mover) relayUnderLease(ctx context.Context, r *runner, resumed bool) error {
	m := r.Run
	if r.lease == nil {
		var err error
		if r.lease, err = e.holdLease(ctx, m.RunID, m.SourceNodeID); err != nil {
			return err
		}
	}
	defer r.lease.release()
	if resumed {
		recs, err := e.readRecords(ctx, m.RunID)
		if err != nil {
			return err
		}
		if recs.InFlight != nil && len(recs.InFlight.TargetDiscarded) > 0 {
			return fmt.Errorf("%w: an earlier apply of run %s found that the target queue did not take its first message (source id %d), "+
				"so the target has spent that message's duplicate id", core.ErrTargetDiscards, m.RunID, recs.InFlight.TargetDiscarded[0])
		}
		base, confirmed, err := e.relayedBefore(ctx, m.RunID, recs.InFlight)
		if err != nil {
			return err
		}
		r.Progress.ContinueAfter(base, confirmed)
		if recs.InFlight != nil {
			if err := e.oweStaged(ctx, r, recs.InFlight.mayBeOnTarget()); err != nil {
				return err
			}
		}
		r.window.resume(recs.Expiry)
		if recs.Staging != nil {
			r.lateMovesBy = recs.Staging.LandsBy
		}
	} else {
		r.ProveFirstDelivery()
	}
	r.Book.StartCounting()
	e.measureSelection(ctx, r)
	defer r.Progress.Beat(ctx)()
	if err := r.ReadTarget(ctx); err != nil {
		return err
	}
	r.Progress.SetPhase(core.PhaseStaging)
	if err := r.stageAndRelay(ctx); err != nil {
		return err
	}
	r.Progress.SetPhase(core.PhaseFinishing)
	if q, err := e.setup.Source.Queue(ctx, QuarantineQueue(m.RunID)); err == nil && q.MessageCount > 0 {
		return fmt.Errorf("%w: %d staged messages could not be converted for AMQP by broker %q and are parked in %s; "+
			"return the run (terraform destroy, or Return) to put them back on %s", errQuarantined, q.MessageCount, e.setup.Source.Name(),
			QuarantineQueue(m.RunID), m.Spec.Source)
	}
	if err := r.Book.Complete(ctx, r.Progress, core.StatusCompleted); err != nil {
		return err
	}
	return removeStaging(ctx, e.setup.Source, r.lease, m.RunID, r.Hooks)
}

// stopped fills res for a run that ends early and says how to continue.
func (r *runner) stopped(ctx context.Context, res *core.Result, cause error) error {
	r.Progress.Fill(res)
	if errors.Is(cause, core.ErrRunBusy) || errors.Is(cause, core.ErrLeaseLost) {
		return cause // the other process owns the run; nothing to add
	}
	if errors.Is(cause, errQuarantined) {
		return fmt.Errorf("run %s relayed %d messages and cannot finish: %w", r.Run.RunID, res.RelayedTotal, cause)
	}
	if errors.Is(cause, core.ErrTargetDiscards) {
		return fmt.Errorf("run %s stopped and is not resumed: its messages stay staged in %s on broker %q, and nothing is lost; "+
			"find and remove what drops messages sent to %s, then return the run to put its messages back on %s and apply again, "+
			"which moves them as a new run: %w", r.Run.RunID, StagingQueue(r.Run.RunID), r.Source.Name(), r.Run.Spec.Target, r.Run.Spec.Source, cause)
	}
	// The run's context may be over; a short fresh one reads what is left.
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if q, err := r.Source.Queue(readCtx, StagingQueue(r.Run.RunID)); err == nil {
		res.Remaining = q.MessageCount
	}
	err := fmt.Errorf("run %s stopped after relaying %d messages; %d remain in staging queue %s on broker %q: nothing is lost, and running the same transfer again resumes it: %w",
		r.Run.RunID, res.Relayed, res.Remaining, StagingQueue(r.Run.RunID), r.Source.Name(), cause)
	if core.Resumable(ctx, cause) {
		return fmt.Errorf("%w: %w", core.ErrInterrupted, err)
	}
	return err
}

// measureSelection records, as this process starts on run r, what is left of its selection on
// the source (counted as the refusal rules count it) and in staging. Progress is best effort: a
// count that fails leaves the size a lower bound until staging is complete.
func (e *Mover) measureSelection(ctx context.Context, r *runner) {
	var inStaging int64
	if q, err := e.setup.Source.Queue(ctx, StagingQueue(r.Run.RunID)); err == nil {
		inStaging = q.MessageCount
	}
	src, err := e.setup.Source.Queue(ctx, r.Run.Spec.Source.Queue)
	if err != nil {
		r.Progress.ExpectSelection(inStaging, 0, core.CountAtLeast)
		return
	}
	f := preflight.Facts{SourceQueue: &src, SelectionCount: -1}
	switch err := e.setup.CountSelection(ctx, r.Run.Spec, &f); {
	case err != nil || f.FilterError != "" || f.SelectionCount < 0:
		r.Progress.ExpectSelection(inStaging, 0, core.CountAtLeast)
	case f.SelectionCountCapped:
		r.Progress.ExpectSelection(inStaging, f.SelectionCount, core.CountAtLeast)
	default:
		// An id list too long to count is an upper bound (ids not on the queue are ignored):
		// a fair estimate, corrected when staging is complete.
		r.Progress.ExpectSelection(inStaging, f.SelectionCount, core.CountEstimate)
	}
}
