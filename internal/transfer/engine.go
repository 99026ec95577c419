package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// errQuarantined: the broker dead-lettered staged messages it could not convert for the relay
// into the run's quarantine queue. Resuming cannot help; returning the run can.
var errQuarantined = errors.New("messages in quarantine")

// ErrInterrupted wraps the error of a run stopped before it finished (cancelled, timed out, a
// broker gone for longer than the retry budget). Nothing is lost: every message is on the
// source, in staging or on the target, and running the same spec again resumes the run.
var ErrInterrupted = errors.New("run interrupted")

// Engine runs transfers between two brokers.
type Engine struct {
	Source, Target *artemis.Client
	Options        Options
	// Hooks stop a run at precise points, for tests; the zero value in production.
	Hooks Hooks
	// Bookkeeper, when set, records each run in the transfer ledger and fences it to one
	// process at a time (bookkeeping.go). Nil: no ledger.
	Bookkeeper Bookkeeper
	// DuplicateProbes, when set, shares the target's duplicate-detection canary with the other
	// engines of the process that hold it (dedup_probes.go). Nil: every check sends its own.
	DuplicateProbes *DuplicateProbes
	// PassedChecks, when set, lets a run that starts or resumes right after a full preflight of
	// the same transfer in this process skip its own (passed_checks.go). Nil: every run checks.
	PassedChecks *PassedChecks
}

// Hooks are called at precise points of a run so that tests can stop or kill it there instead
// of after a timeout, which would depend on the machine's speed. Each nil hook is skipped.
type Hooks struct {
	// BeforeSend runs before each message is sent to the target.
	BeforeSend func()
	// AfterConfirm runs after each target outcome is received, before the staged message is
	// accepted.
	AfterConfirm func()
	// AfterStageChunk runs after each broker-side staging move.
	AfterStageChunk func()
	// StagingDepthRead runs before each read of the staging queue's depth that decides whether
	// staging waits for the relay.
	StagingDepthRead func()
	// BrowseIdle runs when a read of a run's records ended by waiting out the browse's idle
	// timeout rather than at the count of records it expected: a resume that waits one out
	// starts that much later.
	BrowseIdle func()
}

// Worker is one run (or one return) in this process. Each field has one owner: progress its own
// (progress.go), window the staging of expiring messages (expiry.go), targetPolicy
// readTargetPolicy, selector a return's settling of the in-flight batches (return.go).
type Worker struct {
	Source, Target *artemis.Client
	Opts           Options
	Run              Manifest
	Hooks          Hooks
	Progress       *Tracker
	// targetPolicy is the target address's address-full-policy: BLOCK and FAIL make the relay
	// wait for space.
	targetPolicy string
	// book records the run in the ledger; nil or empty without one.
	Book *Book
	// pace keeps the sends to Options.MaxMessagesPerSecond; nil without a cap.
	pace *pacer
}

// mover is a move's run (or return) in this process: the runner, with the move's own state.
// window is the staging of expiring messages (expiry.go); selector a return's settling of the
// in-flight batches (return.go).
type mover struct {
	*Worker
	window expiryWindow
	// selector limits the relay to some staged messages (a return relays the in-flight ones).
	selector string
}

// newRunner starts work on run m in this process.
func (e *Engine) NewWorker(m Manifest, h Hooks, phase Phase) *Worker {
	opts := e.Options.WithDefaults()
	return &Worker{Source: e.Source, Target: e.Target, Opts: opts, Run: m, Hooks: h,
		Progress: NewTracker(m.RunID, phase, opts.Progress), pace: newPacer(opts.MaxMessagesPerSecond)}
}

// readTargetPolicy reads the target address's full policy before relaying.
func (r *Worker) ReadTargetPolicy(ctx context.Context) error {
	settings, err := r.Target.AddressSettings(ctx, r.Run.Spec.Target.Address)
	if err != nil {
		return err
	}
	r.targetPolicy = settings.AddressFullPolicy
	return nil
}

// Move runs spec to the end: it resumes the unfinished run of spec when there is one, else
// starts a new run with t0 = now.
func (e *Engine) Move(ctx context.Context, spec Spec) (Result, error) {
	return e.move(ctx, spec, e.Hooks)
}

func (e *Engine) move(ctx context.Context, spec Spec, h Hooks) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	if spec.Mode == ModeCopy {
		return Result{}, fmt.Errorf("mode %q: a copy runs with Copy, which never stages the source's messages", spec.Mode)
	}
	runs, err := e.UnfinishedRuns(ctx, &spec)
	if err != nil {
		return Result{}, err
	}
	switch len(runs) {
	case 0:
		return e.start(ctx, spec, h)
	case 1:
		return e.resume(ctx, runs[0].RunID, &spec, h)
	default:
		ids := make([]string, len(runs))
		for i, r := range runs {
			ids[i] = r.RunID
		}
		return Result{}, fmt.Errorf("%d unfinished runs of this transfer on broker %q (%s): resume or return them one at a time",
			len(runs), e.Source.Name(), strings.Join(ids, ", "))
	}
}

// RefusedError is a transfer the refusal rules stopped: a new one before anything moved, a
// resumed one before anything more moved.
type RefusedError struct {
	Findings []preflight.Finding // the errors among the findings
	// ResumedRunID is the run that was not resumed; empty for a new transfer.
	ResumedRunID string
}

func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		parts[i] = f.Summary + ": " + f.Detail
		if f.Attribute != "" {
			parts[i] = f.Attribute + ": " + parts[i]
		}
	}
	if e.ResumedRunID != "" {
		return fmt.Sprintf("run %s is not resumed, and its staged messages stay in %s: %s", e.ResumedRunID,
			StagingQueue(e.ResumedRunID), strings.Join(parts, "; "))
	}
	return "the transfer is refused before anything moved: " + strings.Join(parts, "; ")
}

// start creates a new run: the refusal rules first, then staging settings and queues, then
// the manifest, then the work.
func (e *Engine) start(ctx context.Context, spec Spec, h Hooks) (Result, error) {
	if err := e.check(ctx, spec); err != nil {
		return Result{}, err
	}
	m, srcInfo, err := e.NewRun(ctx, spec)
	if err != nil {
		return Result{}, err
	}
	// The ledger records the run, and fences it, before anything moves.
	book, err := e.OpenBook(ctx, m, BookNew)
	if err != nil {
		return Result{}, err
	}
	if err := e.createStaging(ctx, m, srcInfo.Version); err != nil {
		book.End(ctx, NewTracker(m.RunID, PhaseStaging, nil), StatusFailed, err)
		return Result{}, err
	}
	return e.execute(ctx, m, false, h, book)
}

// createStaging creates a new run's staging queues and writes its manifest.
func (e *Engine) createStaging(ctx context.Context, m Manifest, version string) error {
	if err := ensureStaging(ctx, e.Source, version, m.RunID); err != nil {
		return err
	}
	conn, err := ConnectRunNode(ctx, e.Source, m.RunID, "source", m.SourceNodeID)
	if err != nil {
		return err
	}
	err = writeManifest(ctx, conn, m)
	_ = conn.Close()
	return err
}

// check applies the refusal rules to spec against both brokers as they are now, and returns a
// *RefusedError when any refuses. A full preflight of the same transfer that passed moments ago
// in this process (PassedChecks) stands in for it.
func (e *Engine) check(ctx context.Context, spec Spec) error {
	if e.PassedChecks.take(CheckKey(spec, e.Options)) {
		return nil
	}
	findings, err := e.preflight(ctx, spec, true)
	if err != nil {
		return err
	}
	if !preflight.HasErrors(findings) {
		return nil
	}
	refused := &RefusedError{}
	for _, f := range findings {
		if f.Severity == preflight.Error {
			refused.Findings = append(refused.Findings, f)
		}
	}
	return refused
}

// Resume finishes an unfinished run, found by its id on the source broker. expect, when not
// nil, must describe the same transfer as the run's manifest.
func (e *Engine) Resume(ctx context.Context, runID string, expect *Spec) (Result, error) {
	return e.resume(ctx, runID, expect, e.Hooks)
}

func (e *Engine) resume(ctx context.Context, runID string, expect *Spec, h Hooks) (Result, error) {
	m, err := e.loadManifest(ctx, runID)
	if err != nil {
		return Result{}, err
	}
	if expect != nil && expect.Key() != m.Spec.Key() {
		return Result{}, fmt.Errorf("run %s moves %s to %s, not %s to %s", runID, m.Spec.Source, m.Spec.Target, expect.Source, expect.Target)
	}
	// The brokers may have changed since the run began (a DROP policy on the target, duplicate
	// detection turned off): the rest of the run meets the same rules as a new one.
	if err := e.check(ctx, m.Spec); err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			refused.ResumedRunID = runID
		}
		return Result{}, err
	}
	srcInfo, err := e.Source.BrokerInfo(ctx)
	if err != nil {
		return Result{}, err
	}
	book, err := e.OpenBook(ctx, m, BookResume)
	if err != nil {
		return Result{}, err
	}
	if err := ensureStaging(ctx, e.Source, srcInfo.Version, runID); err != nil {
		book.End(ctx, NewTracker(runID, PhaseStaging, nil), StatusInterrupted, err)
		return Result{}, err
	}
	return e.execute(ctx, m, true, h, book)
}

// resolveAddresses fills in the source and target addresses from the brokers.
func (e *Engine) ResolveAddresses(ctx context.Context, spec *Spec) error {
	src, err := e.Source.Queue(ctx, spec.Source.Queue)
	if err != nil {
		return fmt.Errorf("source queue: %w", err)
	}
	if spec.Source.Address != "" && spec.Source.Address != src.Address {
		return fmt.Errorf("source queue %s is on address %q, not %q", spec.Source, src.Address, spec.Source.Address)
	}
	spec.Source.Address = src.Address
	tgt, err := e.Target.Queue(ctx, spec.Target.Queue)
	if err != nil {
		return fmt.Errorf("target queue: %w", err)
	}
	if spec.Target.Address != "" && spec.Target.Address != tgt.Address {
		return fmt.Errorf("target queue %s is on address %q, not %q", spec.Target, tgt.Address, spec.Target.Address)
	}
	spec.Target.Address = tgt.Address
	return nil
}

// execute stages what is left of the selection, relays it, and removes staging. A resumed run
// first reads what earlier processes recorded: how many they relayed, and the expiry window
// they were staging.
func (e *Engine) execute(ctx context.Context, m Manifest, resumed bool, h Hooks, book *Book) (Result, error) {
	r := &mover{Worker: e.NewWorker(m, h, PhaseStaging)}
	r.Book, book.Progress = book, r.Progress
	// A lease lost to another process (ledger) stops this one at once.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	book.Renew(runCtx, cancel)
	res, err := e.work(runCtx, r, resumed)
	if cause := context.Cause(runCtx); errors.Is(cause, ledger.ErrLeaseLost) {
		err = fmt.Errorf("%w; this process stopped working on it", cause)
	}
	book.End(ctx, r.Progress, EndStatus(err), err)
	return res, err
}

// work is execute's run: the lease on the source broker, what earlier processes did, staging
// and relaying, and the end of staging.
func (e *Engine) work(ctx context.Context, r *mover, resumed bool) (Result, error) {
	m := r.Run
	res := Result{RunID: m.RunID, T0: m.T0, Resumed: resumed}
	release, err := e.holdLease(ctx, m.RunID, m.SourceNodeID)
	if err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	defer release()
	if resumed {
		recs, err := e.readRecords(ctx, m.RunID)
		if err != nil {
			return res, r.stopped(ctx, &res, err)
		}
		base, confirmed, err := e.relayedBefore(ctx, m.RunID, recs.InFlight)
		if err != nil {
			return res, r.stopped(ctx, &res, err)
		}
		r.Progress.ContinueAfter(base, confirmed)
		r.window.resume(recs.Expiry)
	}
	r.Book.StartCounting()
	e.measureSelection(ctx, r)
	defer r.Progress.Beat(ctx)()
	if err := r.ReadTargetPolicy(ctx); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	r.Progress.SetPhase(PhaseStaging)
	if err := r.stageAndRelay(ctx); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	r.Progress.SetPhase(PhaseFinishing)
	if q, err := e.Source.Queue(ctx, QuarantineQueue(m.RunID)); err == nil && q.MessageCount > 0 {
		return res, r.stopped(ctx, &res, fmt.Errorf("%w: %d staged messages could not be converted for AMQP by broker %q and are parked in %s; "+
			"return the run (terraform destroy, or Return) to put them back on %s", errQuarantined, q.MessageCount, e.Source.Name(),
			QuarantineQueue(m.RunID), m.Spec.Source))
	}
	if err := r.Book.Complete(ctx, r.Progress, StatusCompleted); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	if err := removeStaging(ctx, e.Source, m.RunID); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	r.Progress.Fill(&res)
	return res, nil
}

// stopped fills res for a run that ends early and says how to continue.
func (r *mover) stopped(ctx context.Context, res *Result, cause error) error {
	r.Progress.Fill(res)
	if errors.Is(cause, ErrRunBusy) {
		return cause // the other process owns the run; nothing to add
	}
	if errors.Is(cause, errQuarantined) {
		return fmt.Errorf("run %s relayed %d messages and cannot finish: %w", r.Run.RunID, res.RelayedTotal, cause)
	}
	// The run's context may be over; a short fresh one reads what is left.
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if q, err := r.Source.Queue(readCtx, StagingQueue(r.Run.RunID)); err == nil {
		res.Remaining = q.MessageCount
	}
	err := fmt.Errorf("run %s stopped after relaying %d messages; %d remain in staging queue %s on broker %q: nothing is lost, and running the same transfer again resumes it: %w",
		r.Run.RunID, res.Relayed, res.Remaining, StagingQueue(r.Run.RunID), r.Source.Name(), cause)
	if ctx.Err() != nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) ||
		artemis.IsConnectionLost(cause) || errors.Is(cause, artemis.ErrUnreachable) || errors.Is(cause, ledger.ErrUnavailable) {
		return fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return err
}
