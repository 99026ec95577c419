package provider

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// ledgerOpenTimeout bounds connecting to the ledger, and migrating its schema before the first
// write.
const ledgerOpenTimeout = 30 * time.Second

// Ledger returns the transfer ledger of ledger_dsn, connected but not migrated, or nil when none
// is set: what terraform plan and the data sources read, writing nothing. It is connected on
// first use and kept for the life of the provider process: Terraform starts one process per
// command (plan, apply) and ends it afterwards, which closes the pool's connections, and the
// framework has no close hook. One small pool (ledger.Options: 4 connections) then serves every
// resource and data source of the command. A failure is not kept: the next call tries again.
func (b *providerRuntime) Ledger(ctx context.Context) (*ledger.Ledger, error) {
	if b.ledgerDSN == "" {
		return nil, nil
	}
	b.ledgerMu.Lock()
	defer b.ledgerMu.Unlock()
	return b.connectedLedger(ctx)
}

// connectedLedger is Ledger with ledgerMu held.
func (b *providerRuntime) connectedLedger(ctx context.Context) (*ledger.Ledger, error) {
	if b.ledger != nil {
		return b.ledger, nil
	}
	openCtx, cancel := context.WithTimeout(ctx, ledgerOpenTimeout)
	defer cancel()
	l, err := ledger.ConnectWith(openCtx, b.ledgerDSN, ledger.Options{})
	if err != nil {
		return nil, err
	}
	b.ledger = l
	return l, nil
}

// writableLedger is Ledger with its schema created or migrated to this provider's version: what
// an apply that records a run uses. The migration runs once per process, on the first apply that
// writes to the ledger, never at plan.
func (b *providerRuntime) writableLedger(ctx context.Context) (*ledger.Ledger, error) {
	if b.ledgerDSN == "" {
		return nil, nil
	}
	b.ledgerMu.Lock()
	defer b.ledgerMu.Unlock()
	l, err := b.connectedLedger(ctx)
	if err != nil || b.ledgerMigrated {
		return l, err
	}
	migrateCtx, cancel := context.WithTimeout(ctx, ledgerOpenTimeout)
	defer cancel()
	if err := l.Migrate(migrateCtx); err != nil {
		return nil, err
	}
	b.ledgerMigrated = true
	return l, nil
}

// ledgerSchema reads the ledger schema's version, writing nothing; a schema newer than this
// provider knows is an error that matches ledger.ErrSchemaTooNew.
func (b *providerRuntime) ledgerSchema(ctx context.Context) (ledger.SchemaStatus, error) {
	l, err := b.Ledger(ctx)
	if err != nil || l == nil {
		return ledger.SchemaStatus{}, err
	}
	readCtx, cancel := context.WithTimeout(ctx, ledgerOpenTimeout)
	defer cancel()
	return l.SchemaStatus(readCtx)
}

// bookkeeper is what the engine records runs with: nil without a ledger. For an apply (writes)
// the ledger's schema is migrated first. For a plan it is only read: on a schema not yet created
// or older than this provider's, no run this provider could resume is recorded, so the plan
// reads nothing from the ledger (nil) and apply migrates it.
func (b *providerRuntime) bookkeeper(ctx context.Context, writes bool) (transfer.Bookkeeper, error) {
	if !writes {
		st, err := b.ledgerSchema(ctx)
		if err != nil || !st.Current() {
			return nil, err
		}
		l, err := b.Ledger(ctx)
		if err != nil || l == nil {
			return nil, err
		}
		return transfer.NewLedgerBook(l, b.creator), nil
	}
	l, err := b.writableLedger(ctx)
	if err != nil || l == nil {
		return nil, err
	}
	return transfer.NewLedgerBook(l, b.creator), nil
}

// runCreator says who creates runs from this process: the OS user, the host, and the
// Terraform workspace (see terraformWorkspace).
func runCreator(getenv environment, readFile func(name string) ([]byte, error)) ledger.Creator {
	c := ledger.Creator{User: getenv("USER"), Workspace: terraformWorkspace(getenv, readFile)}
	if u, err := user.Current(); err == nil && u.Username != "" {
		c.User = u.Username
	}
	if host, err := os.Hostname(); err == nil {
		c.Host = host
	}
	return c
}

// terraformWorkspace names the workspace of the Terraform run that started this process.
// Terraform tells a provider nothing of it: TF_WORKSPACE, when set, overrides the selection, and
// otherwise `terraform workspace select` records its choice in the file "environment" of the data
// directory (TF_DATA_DIR, default .terraform), relative to the working directory, which is the
// directory Terraform starts its providers in. With neither, it is Terraform's own "default".
func terraformWorkspace(getenv environment, readFile func(name string) ([]byte, error)) string {
	if ws := strings.TrimSpace(getenv("TF_WORKSPACE")); ws != "" {
		return ws
	}
	dataDir := getenv("TF_DATA_DIR")
	if dataDir == "" {
		dataDir = ".terraform"
	}
	if b, err := readFile(filepath.Join(dataDir, "environment")); err == nil {
		if ws := strings.TrimSpace(string(b)); ws != "" {
			return ws
		}
	}
	return "default"
}
