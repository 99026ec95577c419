// Package ledger keeps the bookkeeping of transfers in PostgreSQL: the runs (who started what,
// when, how far it got and how it ended), an append-only event log per run, a lease that
// fences a run to one process at a time, and the source message ids a copy has already put on
// the target. Artemis holds the messages; the ledger holds only bookkeeping.
//
// Open migrates the ledger's own schema (artemis_transfer) with migrations embedded in the
// binary. Every call takes a context and is bounded by it; an outage of PostgreSQL surfaces as
// ErrUnavailable, which callers retry for a bounded time with RetryWithin and otherwise treat
// as "pause the run". The engine uses the ledger through a small interface of its own (the
// methods it needs), so it can run without one.
package ledger

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Ledger is a connection pool on the ledger's database. It is safe for concurrent use.
type Ledger struct {
	pool *pgxpool.Pool
	// where names the server for errors ("host:port/database as user"), never the password.
	where    string
	password string
}

// Options tunes Open. The zero value is what the provider uses.
type Options struct {
	// MaxConns caps the pool. Zero means 4: the engine writes once per batch, so a few
	// connections serve a run, and a shared PostgreSQL is not crowded by many applies.
	MaxConns int32
	// ConnectTimeout bounds one connection attempt when the DSN sets no connect_timeout.
	// Zero means 10 s, so a server that drops packets is reported rather than waited for.
	ConnectTimeout time.Duration
}

// Open connects to the ledger's PostgreSQL (dsn: a postgres:// URL or key=value string, as
// libpq takes them), checks that it answers, and migrates the ledger schema. Errors name the
// server (host, port, database, user) and the cause, never the password; an unreachable
// server gives an error that matches ErrUnavailable, and a schema migrated by a newer
// provider one that matches ErrSchemaTooNew.
func Open(ctx context.Context, dsn string) (*Ledger, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, opts Options) (*Ledger, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse error already masks the password; it names the part it could not read.
		return nil, fmt.Errorf("reading the ledger DSN (a postgres:// URL or key=value string): %w", err)
	}
	l := &Ledger{where: describe(cfg), password: cfg.ConnConfig.Password}
	cfg.MaxConns = 4
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
		if opts.ConnectTimeout > 0 {
			cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
		}
	}
	// Lease times use the database's clock (now()), so the session time zone only affects how
	// times are printed; UTC keeps the audit consistent across machines.
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "terraform-provider-artemis"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, l.wrapErr("opening the transfer ledger on PostgreSQL "+l.where, err)
	}
	l.pool = pool
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, l.wrapErr("connecting to the transfer ledger on PostgreSQL "+l.where+
			" (check the DSN's host, port, user, password and database)", err)
	}
	if err := l.migrate(ctx); err != nil {
		pool.Close()
		return nil, l.wrapErr("migrating the transfer ledger schema "+Schema+" on PostgreSQL "+l.where, err)
	}
	return l, nil
}

// Close closes every connection of the pool. It waits for calls in progress to return.
func (l *Ledger) Close() {
	l.pool.Close()
}

// Where names the ledger's server without the password: "host:port/database as user".
func (l *Ledger) Where() string { return l.where }

// describe names a server by host, port, database and user only.
func describe(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	host := c.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	} else {
		host = net.JoinHostPort(host, strconv.Itoa(int(c.Port)))
	}
	return fmt.Sprintf("%s/%s as %s", host, c.Database, c.User)
}
