package copying

import (
	"context"
	"fmt"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// ledgerBook is a copy's copyLedger over the transfer ledger: the engine's bookkeeping, and
// the identities the copy recorded.
type ledgerBook struct {
	core.LedgerBook
}

// NewLedgerBook is the engine's copyLedger over l (a Bookkeeper for moves too), creating runs
// as by.
func NewLedgerBook(l *ledger.Ledger, by ledger.Creator) core.Bookkeeper {
	return ledgerBook{core.LedgerBook{Ledger: l, By: by}}
}

func (b ledgerBook) RecordCopied(ctx context.Context, runID, holder string, ids []int64) error {
	_, err := b.Ledger.RecordCopied(ctx, runID, holder, ids)
	return err
}

func (b ledgerBook) CopiedAmong(ctx context.Context, runID string, ids []int64) (map[int64]bool, error) {
	return b.Ledger.CopiedAmong(ctx, runID, ids)
}

func (b ledgerBook) UnfinishedCopies(ctx context.Context, specKey string) ([]CopyRun, error) {
	runs, err := b.Ledger.UnfinishedCopies(ctx, specKey)
	if err != nil {
		return nil, err
	}
	return copyRunsFromLedger(runs), nil
}

func (b ledgerBook) ReadCopyRun(ctx context.Context, runID string) (CopyRun, error) {
	run, err := b.Ledger.GetRun(ctx, runID)
	if err != nil {
		return CopyRun{}, err
	}
	if run.Mode != ledger.ModeCopy {
		return CopyRun{}, fmt.Errorf("reading copy run %s: the transfer ledger records it as a %s: %w", runID, run.Mode, ledger.ErrRunNotFound)
	}
	return copyRunFromLedger(run), nil
}
