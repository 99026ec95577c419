package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// ledgerDB is the database the copy contender's ledger lives in: one per benchmark run, created
// on the environment's PostgreSQL, so that no run of an earlier benchmark (or of a test) shares
// its tables, and dropped at the end.
type ledgerDB struct {
	server string // the environment's DSN, to create and drop from
	name   string
	DSN    string
}

// createLedgerDB creates bench_<random> on the PostgreSQL at serverDSN.
func createLedgerDB(ctx context.Context, serverDSN string) (*ledgerDB, error) {
	if serverDSN == "" {
		return nil, errors.New("the copy contender needs a ledger, and the test environment has no postgres_dsn")
	}
	u, err := url.Parse(serverDSN)
	if err != nil {
		return nil, fmt.Errorf("postgres_dsn of the test environment is not a URL: %w", err)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("naming the copy's ledger database: %w", err)
	}
	db := &ledgerDB{server: serverDSN, name: "bench_" + hex.EncodeToString(b[:])}
	if err := db.exec(ctx, "CREATE DATABASE "+db.name); err != nil {
		return nil, fmt.Errorf("creating the copy's ledger database %s: %w", db.name, err)
	}
	u.Path = "/" + db.name
	db.DSN = u.String()
	return db, nil
}

// drop removes the database, cutting any connection a killed child left.
func (db *ledgerDB) drop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := db.exec(ctx, "DROP DATABASE IF EXISTS "+db.name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping the copy's ledger database %s: %w", db.name, err)
	}
	return nil
}

func (db *ledgerDB) exec(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db.server)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
