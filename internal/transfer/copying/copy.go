package copying

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Copier runs copies between the two brokers of its setup.
type Copier struct {
	setup *core.Setup
	// beforeRecording, when set, runs after a new copy's preflight and before its run is
	// recorded: tests hold two processes there to start the same copy at the same moment.
	beforeRecording func()
}

// New is a Copier over setup.
func New(setup *core.Setup) *Copier { return &Copier{setup: setup} }

// errCopyNeedsLedger: a copy was asked of an engine without a copyLedger.
var errCopyNeedsLedger = errors.New("a copy needs the transfer ledger (ledger_dsn): it records which messages were copied, so a resumed copy neither skips nor doubles one")

// copyLedger is what a copy needs of the ledger on top of Bookkeeper.
type copyLedger interface {
	core.Bookkeeper
	// RecordCopied records the identities of source messages the target confirmed, one
	// statement per batch, fenced by holder's lease (ledger.ErrLeaseLost once another process
	// took the run).
	RecordCopied(ctx context.Context, runID, holder string, ids []int64) error
	// CopiedAmong says which of ids the run has recorded, in one query.
	CopiedAmong(ctx context.Context, runID string, ids []int64) (map[int64]bool, error)
	// UnfinishedCopies lists the runs of a spec key that are neither completed nor abandoned,
	// oldest first.
	UnfinishedCopies(ctx context.Context, specKey string) ([]CopyRun, error)
	// ReadCopyRun reads one copy run, finished or not; the error matches ledger.ErrRunNotFound
	// when the ledger has no copy run of that id (none at all, or a move's).
	ReadCopyRun(ctx context.Context, runID string) (CopyRun, error)
}

// CopyRun is a copy run as the ledger records it.
type CopyRun struct {
	RunID  string
	T0     time.Time
	Status string
	// Source and Target are the run's queues; Filter is its selection's filter, SelectedIDs how
	// many message ids an id selection names (the ledger records no ids).
	Source, Target core.Endpoint
	Filter         string
	SelectedIDs    int
	// Copied is how many messages the run has recorded as copied, by every process.
	Copied int64
	// Holder and HeldSince name the process that holds the run's lease; empty when none does.
	Holder    string
	HeldSince time.Time
	// SourceNodeID and TargetNodeID are the broker nodes the run is pinned to: a resumed copy
	// sends only to the target node whose duplicate-id cache holds its last batches' ids.
	SourceNodeID string
	TargetNodeID string
	// IdentityVersion is the version of the message identity the run records copies by
	// (messageIdentityV).
	IdentityVersion int
}

// Copy runs a copy of spec (Mode ModeCopy) to the end: it resumes the unfinished copy of spec
// the ledger records when there is one, else starts a new run with t0 = now. Result.Relayed
// counts the messages this process put on the target, Result.RelayedTotal those of every
// process.
//
// Errors: errCopyNeedsLedger without a copyLedger; *core.RefusedError when the refusal rules stop
// it (wrapped, for a resumed run); one matching core.ErrRunBusy and *ledger.LeaseHeldError when
// another process runs the copy; core.ErrInterrupted when it stopped early but can be resumed as
// it is (cancelled, a broker or the ledger away for longer than the retry budget).
func (e *Copier) Copy(ctx context.Context, spec core.Spec) (core.Result, error) {
	return e.copy(ctx, spec, e.setup.Hooks)
}

// unfinishedCopyRuns lists the unfinished copies of spec in the ledger, oldest first.
func (e *Copier) unfinishedCopyRuns(ctx context.Context, spec core.Spec) ([]CopyRun, error) {
	cl, err := e.recordingLedger()
	if err != nil {
		return nil, err
	}
	return e.unfinishedCopies(ctx, cl, spec.Key())
}

// UnfinishedCopy reads copy run runID from the ledger, once: a look-up, not a run, so an
// outage of the ledger is an error at once instead of being waited out. The error matches
// core.ErrNoSuchRun when the ledger has the run as finished (completed, abandoned) or not at
// all, as a move's, or when the engine has no ledger.
func (e *Copier) UnfinishedCopy(ctx context.Context, runID string) (CopyRun, error) {
	cl, err := e.recordingLedger()
	if errors.Is(err, errCopyNeedsLedger) {
		return CopyRun{}, fmt.Errorf("copy run %s: no transfer ledger records it: %w", runID, core.ErrNoSuchRun)
	}
	if err != nil {
		return CopyRun{}, err
	}
	run, err := cl.ReadCopyRun(ctx, runID)
	if errors.Is(err, ledger.ErrRunNotFound) {
		return CopyRun{}, fmt.Errorf("copy run %s: the transfer ledger has no copy of that id: %w: %w", runID, core.ErrNoSuchRun, err)
	}
	if err != nil {
		return CopyRun{}, fmt.Errorf("reading copy run %s from the transfer ledger: %w", runID, err)
	}
	switch ledger.Status(run.Status) {
	case ledger.StatusRunning, ledger.StatusInterrupted, ledger.StatusFailed:
		return run, nil
	}
	return CopyRun{}, fmt.Errorf("copy run %s: the transfer ledger has it as %s: %w", runID, run.Status, core.ErrNoSuchRun)
}

// ResumeCopy finishes the unfinished copy runID of spec (an imported copy), as the ledger
// records it. Errors as for Copy, and one matching core.ErrNoSuchRun when the ledger has the
// run as finished or not at all.
func (e *Copier) ResumeCopy(ctx context.Context, runID string, spec core.Spec) (core.Result, error) {
	return e.resumeCopyByID(ctx, runID, spec, e.setup.Hooks)
}

// AbandonCopy ends the unfinished copy runID without finishing it: the ledger records it as
// abandoned (retention then purges it), what it copied stays on the target, and the source was
// never touched. A run the ledger has as finished, or not at all, is left as it is. A copy
// another process is running is refused with an error matching core.ErrRunBusy.
func (e *Copier) AbandonCopy(ctx context.Context, runID string) error {
	return e.abandonCopy(ctx, runID)
}
