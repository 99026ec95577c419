package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
)

// LedgerBook is the engine's Bookkeeper over the transfer ledger: it maps the engine's records
// to the ledger's rows, and adds who creates the runs. A copy's ledger adds what it copied
// (copying.NewLedgerBook).
type LedgerBook struct {
	Ledger *ledger.Ledger
	By     ledger.Creator
}

var _ Bookkeeper = LedgerBook{}

func (b LedgerBook) CreateRun(ctx context.Context, r BookedRun) error {
	return b.Ledger.CreateRun(ctx, ledger.Run{ID: r.ID, Fingerprint: r.SpecKey, Mode: ledger.Mode(r.Mode),
		SourceBroker: r.Source.Broker, SourceQueue: r.Source.Queue, TargetBroker: r.Target.Broker, TargetQueue: r.Target.Queue,
		Filter: r.Filter, SelectedIDs: r.SelectedIDs, T0: r.T0, CreatedBy: b.By, SourceNodeID: r.SourceNodeID, TargetNodeID: r.TargetNodeID, CopyIdentity: r.CopyIdentity})
}

func (b LedgerBook) RunCounts(ctx context.Context, runID string) (BookedCounts, bool, error) {
	run, err := b.Ledger.GetRun(ctx, runID)
	if errors.Is(err, ledger.ErrRunNotFound) {
		return BookedCounts{}, false, nil
	}
	if err != nil {
		return BookedCounts{}, false, err
	}
	c := run.Counters
	return BookedCounts{Staged: c.Staged, Relayed: c.Relayed, Resent: c.Resent, Returned: c.Returned}, true, nil
}

func (b LedgerBook) TakeLease(ctx context.Context, runID, holder string, ttl time.Duration) error {
	_, err := b.Ledger.TakeLease(ctx, runID, holder, ttl)
	return err
}

func (b LedgerBook) RenewLease(ctx context.Context, runID, holder string, ttl time.Duration) error {
	_, err := b.Ledger.RenewLease(ctx, runID, holder, ttl)
	return err
}

func (b LedgerBook) ReleaseLease(ctx context.Context, runID, holder string) error {
	return b.Ledger.ReleaseLease(ctx, runID, holder)
}

func (b LedgerBook) AddCounters(ctx context.Context, runID, holder string, seq int64, d BookedCounts) error {
	return b.Ledger.AddCountersOnce(ctx, runID, holder, seq, ledger.Counters{Staged: d.Staged, Relayed: d.Relayed, Resent: d.Resent, Returned: d.Returned})
}

func (b LedgerBook) SetStatus(ctx context.Context, runID, holder, status string, detail map[string]any) error {
	switch s := ledger.Status(status); s {
	case ledger.StatusRunning, ledger.StatusInterrupted, ledger.StatusCompleted, ledger.StatusReturned, ledger.StatusFailed,
		ledger.StatusAbandoned:
		return b.Ledger.SetStatus(ctx, runID, holder, s, detail)
	default:
		return fmt.Errorf("setting run %s to %q: not a ledger status", runID, status)
	}
}
