package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// ledgerOpenTimeout bounds opening the ledger (connect, ping, migrate) at configure time.
const ledgerOpenTimeout = 30 * time.Second

// Ledger returns the transfer ledger of ledger_dsn, or nil when none is set. It is opened on
// first use and kept for the life of the provider process: Terraform starts one process per
// command (plan, apply) and ends it afterwards, which closes the pool's connections, and the
// framework has no close hook. One small pool (ledger.Options: 4 connections) then serves every
// resource and data source of the command, and the schema is migrated once, not per operation.
// A failure is not kept: the next call tries again.
func (b *brokerSet) Ledger(ctx context.Context) (*ledger.Ledger, error) {
	if b.ledgerDSN == "" {
		return nil, nil
	}
	b.ledgerMu.Lock()
	defer b.ledgerMu.Unlock()
	if b.ledger != nil {
		return b.ledger, nil
	}
	openCtx, cancel := context.WithTimeout(ctx, ledgerOpenTimeout)
	defer cancel()
	l, err := ledger.Open(openCtx, b.ledgerDSN)
	if err != nil {
		return nil, err
	}
	b.ledger = l
	return l, nil
}

// bookkeeper is what the engine records runs with: nil without a ledger.
func (b *brokerSet) bookkeeper(ctx context.Context) (transfer.Bookkeeper, error) {
	l, err := b.Ledger(ctx)
	if err != nil || l == nil {
		return nil, err
	}
	return ledgerBook{l: l, by: b.creator}, nil
}

// runCreator says who creates runs from this process: the OS user, the host, and the
// Terraform workspace (TF_WORKSPACE, which Terraform sets for a non-default workspace only in
// automation, else "default").
func runCreator(getenv environment) ledger.Creator {
	c := ledger.Creator{User: getenv("USER"), Workspace: getenv("TF_WORKSPACE")}
	if u, err := user.Current(); err == nil && u.Username != "" {
		c.User = u.Username
	}
	if host, err := os.Hostname(); err == nil {
		c.Host = host
	}
	if c.Workspace == "" {
		c.Workspace = "default"
	}
	return c
}

// ledgerBook is the engine's Bookkeeper over the ledger: it maps the engine's records to the
// ledger's rows, and adds who creates the runs.
type ledgerBook struct {
	l  *ledger.Ledger
	by ledger.Creator
}

// A ledgerBook also records what a copy copied: the engine asks its Bookkeeper for these.
var _ transfer.CopyLedger = ledgerBook{}

// NewLedgerBook is the engine's CopyLedger over l, creating runs as by: what the provider gives
// the engine, for a program that runs the engine without a provider (make bench's copy).
func NewLedgerBook(l *ledger.Ledger, by ledger.Creator) transfer.CopyLedger {
	return ledgerBook{l: l, by: by}
}

func (b ledgerBook) CreateRun(ctx context.Context, r transfer.BookedRun) error {
	return b.l.CreateRun(ctx, ledger.Run{ID: r.ID, Fingerprint: r.SpecKey, Mode: ledger.Mode(r.Mode),
		SourceBroker: r.Source.Broker, SourceQueue: r.Source.Queue, TargetBroker: r.Target.Broker, TargetQueue: r.Target.Queue,
		Filter: r.Filter, SelectedIDs: r.SelectedIDs, T0: r.T0, CreatedBy: b.by, SourceNodeID: r.SourceNodeID, TargetNodeID: r.TargetNodeID})
}

func (b ledgerBook) RunCounts(ctx context.Context, runID string) (transfer.BookedCounts, bool, error) {
	run, err := b.l.GetRun(ctx, runID)
	if errors.Is(err, ledger.ErrRunNotFound) {
		return transfer.BookedCounts{}, false, nil
	}
	if err != nil {
		return transfer.BookedCounts{}, false, err
	}
	c := run.Counters
	return transfer.BookedCounts{Staged: c.Staged, Relayed: c.Relayed, Resent: c.Resent, Returned: c.Returned}, true, nil
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

func (b ledgerBook) AddCounters(ctx context.Context, runID, holder string, d transfer.BookedCounts) error {
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

func (b ledgerBook) UnfinishedCopies(ctx context.Context, specKey string) ([]transfer.CopyRun, error) {
	runs, err := b.l.UnfinishedCopies(ctx, specKey)
	if err != nil {
		return nil, err
	}
	return transfer.CopyRunsFromLedger(runs), nil
}
