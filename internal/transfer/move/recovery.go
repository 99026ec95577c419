package move

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// A run is created manifest queue first and removed manifest queue last (createRun,
// removeStaging), and its manifest is written before its staging queue exists: a run whose
// manifest is there can always be resumed, whichever of its other pieces are missing. A run
// found without its manifest was stopped before the manifest was stored (so nothing was
// staged under it), or its record was taken from the queue by hand, or it began under an
// earlier provider that wrote the manifest after the queues. What the next apply does with
// such a run is decideRecovery's choice, from what the source broker shows of it (runState).

// runState is what the source broker shows of an unfinished run.
type runState struct {
	// Manifest: the run's manifest record is readable.
	Manifest bool
	// Staged counts the messages in the run's staging and quarantine queues, including any the
	// broker holds in staging without counting them.
	Staged int64
	// Held: a process has a consumer on the run's manifest queue (its lease) or staging queue
	// (its relay), so it works on the run now.
	Held bool
	// Age is the time since the run's t0.
	Age time.Duration
}

// recovery is what the next apply of a transfer does with its unfinished run.
type recovery int

const (
	// recoverResume: resume the run from its manifest.
	recoverResume recovery = iota
	// recoverRebuild: write the manifest again, from the run's id (its spec key and t0) and the
	// transfer's configuration, then resume: messages are staged under the run.
	recoverRebuild
	// recoverRestart: remove the run (nothing of the source moved under it) and start a new one.
	recoverRestart
	// recoverWait: a process may be creating the run now; look again shortly.
	recoverWait
)

func (r recovery) String() string {
	return [...]string{"resume", "rebuild the manifest and resume", "remove and start again", "wait"}[r]
}

// decideRecovery chooses what the next apply does with an unfinished run of its transfer. A
// run with its manifest is resumed, whatever else is missing. Without the manifest, a run
// held by a live process, or young enough to be one being created, is waited for; otherwise
// one with messages staged gets its manifest back (the run id holds t0, so the same selection
// is staged and the same duplicate ids relayed), and one with nothing staged is removed, since
// nothing moved under it, and the transfer starts again.
func decideRecovery(s runState, grace time.Duration) recovery {
	switch {
	case s.Manifest:
		return recoverResume
	case s.Held, s.Age < grace:
		return recoverWait
	case s.Staged > 0:
		return recoverRebuild
	default:
		return recoverRestart
	}
}

// readRunState reads what the source broker shows of run runID.
func (e *Mover) readRunState(ctx context.Context, runID string) (runState, error) {
	_, t0, err := core.ParseRunID(runID)
	if err != nil {
		return runState{}, err
	}
	s := runState{Age: time.Since(t0)}
	queues, err := e.setup.Source.ListQueues(ctx, StagingQueue(runID))
	if err != nil {
		return s, fmt.Errorf("reading run %s on broker %q: %w", runID, e.setup.Source.Name(), err)
	}
	byName := map[string]artemis.QueueSummary{}
	for _, q := range queues {
		byName[q.Name] = q
	}
	staging, hasStaging := byName[StagingQueue(runID)]
	manifest, hasManifest := byName[ManifestQueue(runID)]
	s.Held = staging.ConsumerCount > 0 || manifest.ConsumerCount > 0
	s.Staged = staging.MessageCount + byName[QuarantineQueue(runID)].MessageCount
	if hasStaging && s.Staged == 0 {
		// The broker can hold a message in staging without counting it (one it failed to
		// convert for the relay); the listing sees it.
		left, err := e.setup.Source.ListMessages(ctx, StagingQueue(runID), "")
		if err != nil {
			return s, fmt.Errorf("reading the staging queue of run %s: %w", runID, err)
		}
		s.Staged = int64(len(left))
	}
	if !hasManifest {
		return s, nil
	}
	conn, err := core.ConnectManagementNode(ctx, e.setup.Source)
	if err != nil {
		return s, fmt.Errorf("reading the manifest of run %s on broker %q: %w", runID, e.setup.Source.Name(), err)
	}
	defer conn.Close()
	_, err = e.readManifest(ctx, conn, runID, manifest.MessageCount)
	switch {
	case err == nil:
		s.Manifest = true
	case !errors.Is(err, ErrNoManifest):
		return s, err
	}
	return s, nil
}

// finishFound carries on with run, the unfinished run of spec on the source broker, as
// decideRecovery says: it resumes it, first writing its manifest again when it is gone and
// messages are staged, or removes a run that staged nothing and starts spec anew. It waits
// (for the start and busy graces at most) while a process may be creating the run.
func (e *Mover) finishFound(ctx context.Context, run UnfinishedRun, spec core.Spec, h core.Hooks) (core.Result, error) {
	if run.Manifest != nil || !errors.Is(run.ManifestError, ErrNoManifest) {
		return e.resume(ctx, run.RunID, &spec, h)
	}
	graces := e.setup.Graces.WithDefaults()
	deadline := time.Now().Add(graces.Start + graces.Busy)
	for {
		s, err := e.readRunState(ctx, run.RunID)
		if err != nil {
			return core.Result{}, err
		}
		switch decideRecovery(s, graces.Start) {
		case recoverResume:
			return e.resume(ctx, run.RunID, &spec, h)
		case recoverRebuild:
			if err := e.rebuildManifest(ctx, run.RunID, spec); err != nil {
				return core.Result{}, err
			}
			return e.resume(ctx, run.RunID, &spec, h)
		case recoverRestart:
			if err := e.discardUnstarted(ctx, run.RunID, spec); err != nil {
				return core.Result{}, err
			}
			return e.start(ctx, spec, h)
		case recoverWait:
		}
		if time.Now().After(deadline) {
			return core.Result{}, fmt.Errorf("run %s of this transfer has no manifest on broker %q and another process holds it (a consumer on %s or %s): %w; apply again once that process has ended",
				run.RunID, e.setup.Source.Name(), ManifestQueue(run.RunID), StagingQueue(run.RunID), core.ErrRunBusy)
		}
		if err := core.Sleep(ctx, min(time.Second, max(graces.Start-s.Age, 100*time.Millisecond))); err != nil {
			return core.Result{}, err
		}
	}
}

// rebuildManifest writes the manifest of run runID of spec again: its id and t0 from the run
// id, the rest as a new run of spec would have them now. The spec's key must be the run's.
func (e *Mover) rebuildManifest(ctx context.Context, runID string, spec core.Spec) error {
	key, t0, err := core.ParseRunID(runID)
	if err != nil {
		return err
	}
	if key != spec.Key() {
		return fmt.Errorf("run %s is not a run of this transfer (key %s): it is left as it is", runID, spec.Key())
	}
	run, srcInfo, err := e.setup.NewRun(ctx, spec)
	if err != nil {
		return fmt.Errorf("writing the manifest of run %s again: %w", runID, err)
	}
	run.RunID, run.T0 = runID, t0
	m := Manifest{FormatVersion: manifestFormatVersion, Run: run, CreatedAt: time.Now().UTC(), CreatedBy: e.setup.Options.CreatedBy}
	if err := createManifestQueue(ctx, e.setup.Source, runID); err != nil {
		return err
	}
	// The settings before the record, as at a start: the manifest queue is on the staging address.
	if err := addStagingSettings(ctx, e.setup.Source, srcInfo.Version, runID); err != nil {
		return err
	}
	if err := e.storeManifest(ctx, m); err != nil {
		return fmt.Errorf("writing the manifest of run %s again: %w", runID, err)
	}
	return nil
}

// errDiscarded is why a run found with neither its manifest nor a staged message ended: it is
// removed, and its transfer starts again as a new run.
var errDiscarded = errors.New("the run stopped before its manifest was stored and staged nothing; its queues were removed and the transfer started again as a new run")

// discardUnstarted removes run runID of spec, which has no manifest and staged nothing: no
// message of the source moved under it. With a ledger the run is recorded as failed, under
// its ledger lease; with or without one, under its lease on the source broker.
func (e *Mover) discardUnstarted(ctx context.Context, runID string, spec core.Spec) error {
	_, t0, err := core.ParseRunID(runID)
	if err != nil {
		return err
	}
	book, err := e.setup.OpenBook(ctx, core.Run{RunID: runID, T0: t0, Spec: spec}, core.BookReturn)
	if err != nil {
		return fmt.Errorf("removing run %s, which staged nothing: %w", runID, err)
	}
	tracker := core.NewTracker(runID, core.PhaseStaging, nil)
	// The run's lease, so that no process of the run is removed under it, on its manifest queue
	// (created again, empty, when the run has lost it, as a return does).
	if err := createManifestQueue(ctx, e.setup.Source, runID); err != nil {
		book.End(ctx, tracker, "", err)
		return fmt.Errorf("removing run %s, which staged nothing: %w", runID, err)
	}
	lease, err := e.holdLease(ctx, runID, "")
	if err != nil {
		book.End(ctx, tracker, "", err)
		return fmt.Errorf("removing run %s, which staged nothing: %w", runID, err)
	}
	defer lease.release()
	if err := removeStaging(ctx, e.setup.Source, lease, runID, core.Hooks{}); err != nil {
		book.End(ctx, tracker, core.StatusInterrupted, err)
		return fmt.Errorf("removing run %s, which staged nothing; applying again tries again: %w", runID, err)
	}
	book.End(ctx, tracker, core.StatusFailed, errDiscarded)
	return nil
}
