package ledger

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Schema is the PostgreSQL schema that holds every ledger table.
const Schema = "artemis_transfer"

// migrationLockKey is the pg_advisory_xact_lock key that serialises migrations of every
// provider process on one database ("artemis.t" as a big-endian int64), so that two applies
// starting at once never run the same migration twice.
const migrationLockKey int64 = 0x617274656d69732e

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered .sql file of migrations/.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded migrations in version order. Names are
// "<version>_<what>.sql"; versions start at 1 and have no gaps.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("reading embedded ledger migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("embedded ledger migration %s is not named <version>_<what>.sql", e.Name())
		}
		raw, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading embedded ledger migration %s: %w", e.Name(), err)
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(raw)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("embedded ledger migrations skip or repeat version %d (found %s)", i+1, m.name)
		}
	}
	return out, nil
}

// schemaVersion is the newest ledger schema version this provider knows.
func schemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// SchemaStatus is what a read of the ledger's schema found, without changing it.
type SchemaStatus struct {
	// Version is the newest migration applied; 0 when the schema or its migrations table is
	// not there yet.
	Version int
	// Known is the newest version this provider knows (schemaVersion).
	Known int
}

// Current reports whether the schema is the one this provider writes.
func (s SchemaStatus) Current() bool { return s.Version == s.Known }

// Missing reports whether the database holds no ledger schema yet.
func (s SchemaStatus) Missing() bool { return s.Version == 0 }

// SchemaStatus reads the ledger schema's version, writing nothing: terraform plan says with it
// whether apply will create or migrate the schema. The error matches ErrSchemaTooNew for a
// schema migrated by a newer provider.
func (l *Ledger) SchemaStatus(ctx context.Context) (SchemaStatus, error) {
	st := SchemaStatus{Known: schemaVersion()}
	var table *string
	if err := l.pool.QueryRow(ctx, `SELECT to_regclass($1)::text`, Schema+".schema_migrations").Scan(&table); err != nil {
		return st, l.wrapErr("reading the transfer ledger schema "+Schema+" on PostgreSQL "+l.where, err)
	}
	if table == nil {
		return st, nil
	}
	if err := l.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+Schema+`.schema_migrations`).Scan(&st.Version); err != nil {
		return st, l.wrapErr("reading the transfer ledger schema version on PostgreSQL "+l.where, err)
	}
	if st.Version > st.Known {
		return st, l.wrapErr("reading the transfer ledger schema on PostgreSQL "+l.where, fmt.Errorf(
			"%w: ledger schema version %d is newer than this provider knows (%d): upgrade the provider", ErrSchemaTooNew, st.Version, st.Known))
	}
	return st, nil
}

// migrate brings the ledger schema up to the newest version this binary embeds, in one
// transaction under an advisory lock: concurrent callers wait for each other, and a failed
// migration leaves nothing half-applied. It refuses a schema newer than this binary knows.
func (l *Ledger) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	known := len(ms)
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockKey); err != nil {
			return fmt.Errorf("waiting for the ledger migration lock: %w", err)
		}
		// CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema
		// exists, so a role given only a schema of its own would be refused: look first.
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, Schema).Scan(&exists); err != nil {
			return fmt.Errorf("looking for schema %s: %w", Schema, err)
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA `+Schema); err != nil {
				return fmt.Errorf("creating schema %s (the role needs CREATE on the database, or create the schema for it: see the ledger guide): %w", Schema, err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+Schema+`.schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("creating %s.schema_migrations: %w", Schema, err)
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+Schema+`.schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("reading the ledger schema version: %w", err)
		}
		if current > known {
			return fmt.Errorf("%w: ledger schema version %d is newer than this provider knows (%d): upgrade the provider",
				ErrSchemaTooNew, current, known)
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("applying ledger migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+Schema+`.schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return fmt.Errorf("recording ledger migration %s: %w", m.name, err)
			}
		}
		return nil
	})
}
