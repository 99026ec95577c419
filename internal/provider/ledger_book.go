package provider

import (
	"context"
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
func (b *providerRuntime) Ledger(ctx context.Context) (*ledger.Ledger, error) {
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
func (b *providerRuntime) bookkeeper(ctx context.Context) (transfer.Bookkeeper, error) {
	l, err := b.Ledger(ctx)
	if err != nil || l == nil {
		return nil, err
	}
	return transfer.NewLedgerBook(l, b.creator), nil
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
