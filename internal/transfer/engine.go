package transfer

import (
	"context"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/copying"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/move"
)

// Engine runs transfers between two brokers. Its fields are core.Setup's: the brokers, the
// options, the hooks, the ledger and what a process shares between its transfers.
type Engine core.Setup

// The vocabulary of a transfer, from core.
type (
	Spec     = core.Spec
	Endpoint = core.Endpoint
	Mode     = core.Mode
	Options  = core.Options
	Result   = core.Result
	Progress = core.Progress
	Phase    = core.Phase
	Hooks    = core.Hooks
	// Point names an instant of a run at which Hooks.Reached runs.
	Point           = core.Point
	Bookkeeper      = core.Bookkeeper
	DuplicateProbes = core.DuplicateProbes
	StagingProbes   = core.StagingProbes
	PassedChecks    = core.PassedChecks
	RefusedError    = core.RefusedError
)

// Orphan is a move on the source broker that no process works on, from move.
type Orphan = move.Orphan

// UnfinishedRun is a run of either mode that has not finished, as the engine finds it: a move
// on its source broker (its staging queue and manifest), a copy in the ledger.
type UnfinishedRun struct {
	RunID string
	Mode  Mode
	T0    time.Time
	// Spec is the transfer the run is of: a move's manifest's, or a copy's ledger row's, whose
	// selection names no message ids (the ledger records only how many: SelectedIDs). It is
	// zero for a move whose manifest is missing or unreadable: ManifestError says why.
	Spec          Spec
	SelectedIDs   int
	ManifestError error
	// Status is a copy's ledger status: running, interrupted or failed; "" for a move.
	Status string
	// StagingQueue is a move's staging queue, Messages how many messages it holds; a copy
	// has neither.
	StagingQueue string
	Messages     int64
	// Copied is how many messages a copy recorded as copied, by every process; 0 for a move.
	Copied int64
}

// The modes, the phase and count kinds a progress report names, and the options' defaults and
// bounds, from core.
const (
	ModeMove = core.ModeMove
	ModeCopy = core.ModeCopy

	PhaseReturning = core.PhaseReturning

	CountAtLeast  = core.CountAtLeast
	CountEstimate = core.CountEstimate

	StagingPrefix           = core.StagingPrefix
	DefaultChunkSize        = core.DefaultChunkSize
	MaxChunkSize            = core.MaxChunkSize
	DefaultBatchSize        = core.DefaultBatchSize
	MaxBatchSize            = core.MaxBatchSize
	DefaultMaxInFlightBytes = core.DefaultMaxInFlightBytes
	MinMaxInFlightBytes     = core.MinMaxInFlightBytes
	MemoryHeadroom          = core.MemoryHeadroom
)

// The errors callers match, from core and move.
var (
	// ErrInterrupted: the run stopped before it finished; nothing is lost, and running the same
	// transfer again resumes it.
	ErrInterrupted = core.ErrInterrupted
	// ErrRunBusy: another process works on the run.
	ErrRunBusy = core.ErrRunBusy
	// ErrNoSuchRun: the run is not unfinished (finished, returned, or never there).
	ErrNoSuchRun = core.ErrNoSuchRun
	// ErrLeaseLost: this process lost the run's lease on the source broker and stopped.
	ErrLeaseLost = core.ErrLeaseLost
	// ErrNoManifest: a move's run has its manifest queue but no manifest in it.
	ErrNoManifest = move.ErrNoManifest
	// ErrTargetDiscards: the target broker confirmed a run's first message and its queue did
	// not take it; a move is returned, a copy starts again as a new run.
	ErrTargetDiscards = core.ErrTargetDiscards
)

// ParseRunID splits a run id into its spec key and t0.
func ParseRunID(id string) (key string, t0 time.Time, err error) { return core.ParseRunID(id) }

// MemoryLimit is the Go soft memory limit for a process that relays with maxInFlightBytes.
func MemoryLimit(maxInFlightBytes int64) int64 { return core.MemoryLimit(maxInFlightBytes) }

// StagingQueue is the name of a move's staging queue and of its address.
func StagingQueue(runID string) string { return move.StagingQueue(runID) }

// ManifestQueue is the queue, on the staging address, that holds a move's manifest.
func ManifestQueue(runID string) string { return move.ManifestQueue(runID) }

func (e *Engine) setup() *core.Setup      { return (*core.Setup)(e) }
func (e *Engine) mover() *move.Mover      { return move.New(e.setup()) }
func (e *Engine) copier() *copying.Copier { return copying.New(e.setup()) }

// Run runs spec to the end, as its mode says: it resumes the unfinished run of spec when there
// is one (on the source broker for a move, in the ledger for a copy), else starts a new run with
// t0 = now.
//
// Errors: *RefusedError when the refusal rules stop it; one matching ErrRunBusy when another
// process works on the run; ErrInterrupted when it stopped early and running it again resumes
// it; one matching copying.ErrCopyNeedsLedger for a copy without a ledger.
func (e *Engine) Run(ctx context.Context, spec Spec) (Result, error) {
	if spec.Mode == ModeCopy {
		return e.copier().Copy(ctx, spec)
	}
	return e.mover().Move(ctx, spec)
}

// Preflight reads what the refusal rules of spec's mode need from both brokers and applies
// them. Nothing is moved: the only writes are short-lived canaries, which prove that the user
// may make every call a run makes (a move's on its staging queues on the source), and that the
// target discards a repeated duplicate id. A pass is remembered in e.PassedChecks, when set, for
// the run that follows it; a refusal forgets an earlier pass.
func (e *Engine) Preflight(ctx context.Context, spec Spec) ([]preflight.Finding, error) {
	findings, err := e.preflight(ctx, spec, true)
	e.PassedChecks.Note(core.CheckKey(spec, e.Options), err == nil && !preflight.HasErrors(findings))
	return findings, err
}

// PreflightWithoutWrites is Preflight that only reads, as terraform plan does by default (a
// reviewer's broker user may only read and browse): the proofs that need writes (the canaries
// and the target send permission) are left out, and a warning says so. A run always makes every
// check, with them, before it moves anything (Check).
func (e *Engine) PreflightWithoutWrites(ctx context.Context, spec Spec) ([]preflight.Finding, error) {
	findings, err := e.preflight(ctx, spec, false)
	if err != nil || preflight.HasErrors(findings) {
		e.PassedChecks.Note(core.CheckKey(spec, e.Options), false) // never remembered as passed: it skipped the canaries
	}
	return findings, err
}

// preflight is the mode's preflight.
func (e *Engine) preflight(ctx context.Context, spec Spec, writes bool) ([]preflight.Finding, error) {
	if spec.Mode == ModeCopy {
		return e.copier().Preflight(ctx, spec, writes)
	}
	return e.mover().Preflight(ctx, spec, writes)
}

// Resume finishes an unfinished move, found by its id on the source broker. expect, when not
// nil, must describe the same transfer as the run's manifest. A copy (expect of mode copy, as
// an imported copy's configuration gives it) is found by its id in the ledger instead.
func (e *Engine) Resume(ctx context.Context, runID string, expect *Spec) (Result, error) {
	if expect != nil && expect.Mode == ModeCopy {
		return e.copier().ResumeCopy(ctx, runID, *expect)
	}
	return e.mover().Resume(ctx, runID, expect)
}

// AbandonCopy ends an unfinished copy without finishing it (see copying.Engine.AbandonCopy):
// what a destroy of an unfinished copy does.
func (e *Engine) AbandonCopy(ctx context.Context, runID string) error {
	return e.copier().AbandonCopy(ctx, runID)
}

// Return puts everything a move still stages back on its source queue and removes staging.
func (e *Engine) Return(ctx context.Context, runID string) (Result, error) {
	return e.mover().Return(ctx, runID)
}

// UnfinishedRun looks up the unfinished run runID of mode: a move on the source broker (it
// needs e.Source), a copy in the ledger (e.Bookkeeper), read once. The error matches
// ErrNoSuchRun when there is no such run: a move without its staging queue and manifest queue
// there, a copy the ledger has as finished or not at all, or an engine without a ledger.
func (e *Engine) UnfinishedRun(ctx context.Context, runID string, mode Mode) (UnfinishedRun, error) {
	if mode == ModeCopy {
		run, err := e.copier().UnfinishedCopy(ctx, runID)
		if err != nil {
			return UnfinishedRun{}, err
		}
		return UnfinishedRun{RunID: run.RunID, Mode: ModeCopy, T0: run.T0, Status: run.Status, Copied: run.Copied,
			Spec: Spec{Mode: ModeCopy, Source: run.Source, Target: run.Target, Selection: core.Selection{Filter: run.Filter}}, SelectedIDs: run.SelectedIDs}, nil
	}
	run, err := e.mover().UnfinishedRun(ctx, runID)
	if err != nil {
		return UnfinishedRun{}, err
	}
	found := UnfinishedRun{RunID: run.RunID, Mode: ModeMove, T0: run.T0, StagingQueue: run.StagingQueue, Messages: run.Messages,
		ManifestError: run.ManifestError}
	if run.Manifest != nil {
		found.Spec = run.Manifest.Spec
		found.SelectedIDs = len(run.Manifest.Spec.Selection.MessageIDs)
	}
	return found, nil
}

// Orphans lists the moves on the source broker that no process works on, oldest first.
func (e *Engine) Orphans(ctx context.Context) ([]Orphan, error) {
	return e.mover().Orphans(ctx)
}

// ReturnOrphan returns an orphaned move to its source queue, with or without its manifest.
func (e *Engine) ReturnOrphan(ctx context.Context, runID string) (Result, error) {
	return e.mover().ReturnOrphan(ctx, runID)
}

// NewLedgerBook is the engine's Bookkeeper over l, for moves and copies, creating runs as by:
// what the provider gives the engine, and what a program that runs the engine without the
// provider (make bench) gives it.
func NewLedgerBook(l *ledger.Ledger, by ledger.Creator) Bookkeeper {
	return copying.NewLedgerBook(l, by)
}
