package transfer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
)

// ledgerBook is the engine's Bookkeeper over the ledger: it maps the engine's records to the
// ledger's rows, and adds who creates the runs.
type ledgerBook struct {
	l  *ledger.Ledger
	by ledger.Creator
}

// A ledgerBook also records what a copy copied: the engine asks its Bookkeeper for these.
var _ CopyLedger = ledgerBook{}

// NewLedgerBook is the engine's Bookkeeper (and CopyLedger) over l, creating runs as by: what
// the provider gives the engine, and what a program that runs the engine without the provider
// (make bench's copy) gives it.
func NewLedgerBook(l *ledger.Ledger, by ledger.Creator) CopyLedger {
	return ledgerBook{l: l, by: by}
}

func (b ledgerBook) CreateRun(ctx context.Context, r BookedRun) error {
	return b.l.CreateRun(ctx, ledger.Run{ID: r.ID, Fingerprint: r.SpecKey, Mode: ledger.Mode(r.Mode),
		SourceBroker: r.Source.Broker, SourceQueue: r.Source.Queue, TargetBroker: r.Target.Broker, TargetQueue: r.Target.Queue,
		Filter: r.Filter, SelectedIDs: r.SelectedIDs, T0: r.T0, CreatedBy: b.by, SourceNodeID: r.SourceNodeID, TargetNodeID: r.TargetNodeID})
}

func (b ledgerBook) RunCounts(ctx context.Context, runID string) (BookedCounts, bool, error) {
	run, err := b.l.GetRun(ctx, runID)
	if errors.Is(err, ledger.ErrRunNotFound) {
		return BookedCounts{}, false, nil
	}
	if err != nil {
		return BookedCounts{}, false, err
	}
	c := run.Counters
	return BookedCounts{Staged: c.Staged, Relayed: c.Relayed, Resent: c.Resent, Returned: c.Returned}, true, nil
}

func (b ledgerBook) TakeOverLease(ctx context.Context, runID, holder, gone string, ttl time.Duration) error {
	_, err := b.l.TakeOverLease(ctx, runID, holder, gone, ttl)
	return err
}

func (b ledgerBook) TakeLease(ctx context.Context, runID, holder string, ttl time.Duration) error {
	_, err := b.l.TakeLease(ctx, runID, holder, ttl)
	return err
}

func (b ledgerBook) RenewLease(ctx context.Context, runID, holder string, ttl time.Duration) error {
	_, err := b.l.RenewLease(ctx, runID, holder, ttl)
	return err
}

func (b ledgerBook) ReleaseLease(ctx context.Context, runID, holder string) error {
	return b.l.ReleaseLease(ctx, runID, holder)
}

func (b ledgerBook) AddCounters(ctx context.Context, runID, holder string, d BookedCounts) error {
	return b.l.AddCounters(ctx, runID, holder, ledger.Counters{Staged: d.Staged, Relayed: d.Relayed, Resent: d.Resent, Returned: d.Returned})
}

func (b ledgerBook) SetStatus(ctx context.Context, runID, status string, detail map[string]any) error {
	switch s := ledger.Status(status); s {
	case ledger.StatusRunning, ledger.StatusInterrupted, ledger.StatusCompleted, ledger.StatusReturned, ledger.StatusFailed,
		ledger.StatusAbandoned:
		return b.l.SetStatus(ctx, runID, s, detail)
	default:
		return fmt.Errorf("setting run %s to %q: not a ledger status", runID, status)
	}
}

func (b ledgerBook) RecordCopied(ctx context.Context, runID, holder string, ids []int64) error {
	_, err := b.l.RecordCopied(ctx, runID, holder, ids)
	return err
}

func (b ledgerBook) CopiedAmong(ctx context.Context, runID string, ids []int64) (map[int64]bool, error) {
	return b.l.CopiedAmong(ctx, runID, ids)
}

func (b ledgerBook) UnfinishedCopies(ctx context.Context, specKey string) ([]CopyRun, error) {
	runs, err := b.l.UnfinishedCopies(ctx, specKey)
	if err != nil {
		return nil, err
	}
	return CopyRunsFromLedger(runs), nil
}
