package ledger

import (
	"context"
	"errors"
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
	// presence is the session that tells other processes this one still runs.
	presence *presence
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
	return openWith(ctx, dsn, Options{})
}

// openWith is Open with options.
func openWith(ctx context.Context, dsn string, opts Options) (*Ledger, error) {
	l, err := ConnectWith(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	if err := l.Migrate(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// ConnectWith is openWith without the migration: it connects and checks that the server
// answers, and writes nothing, so that terraform plan can read the ledger (SchemaStatus, the
// runs) without changing it. Migrate brings the schema up to date before the first write.
func ConnectWith(ctx context.Context, dsn string, opts Options) (*Ledger, error) {
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
	l.presence = &presence{config: cfg.ConnConfig.Copy()}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, l.wrapErr("connecting to the transfer ledger on PostgreSQL "+l.where+
			" (check the DSN's host, port, user, password and database)", err)
	}
	return l, nil
}

// Migrate brings the ledger schema up to the newest version this provider knows; it does
// nothing when the schema is current. The error matches ErrSchemaTooNew for a schema migrated by
// a newer provider.
func (l *Ledger) Migrate(ctx context.Context) error {
	if err := l.migrate(ctx); err != nil {
		return l.wrapErr("migrating the transfer ledger schema "+Schema+" on PostgreSQL "+l.where, err)
	}
	return nil
}

// Close closes every connection of the pool. It waits for calls in progress to return.
func (l *Ledger) Close() {
	l.presence.close()
	l.pool.Close()
}

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

// wrapErr says what the ledger was doing when err happened, marks outages with
// ErrUnavailable, and hides the password, should a server or driver message ever echo it.
func (l *Ledger) wrapErr(doing string, err error) error {
	if err == nil {
		return nil
	}
	named := strings.Contains(doing, l.where)
	switch {
	case isUnavailable(err) && !errors.Is(err, ErrUnavailable) && named:
		err = fmt.Errorf("%w: %w", ErrUnavailable, err)
	case isUnavailable(err) && !errors.Is(err, ErrUnavailable):
		err = fmt.Errorf("%w (PostgreSQL %s): %w", ErrUnavailable, l.where, err)
	case errors.Is(err, context.DeadlineExceeded) && !named:
		// A server that does not answer in time is named, so the reader knows which to check.
		err = fmt.Errorf("no answer from PostgreSQL %s in time: %w", l.where, err)
	}
	return redact(fmt.Errorf("%s: %w", doing, err), l.password)
}

// redactedError hides a secret in the text of an error while keeping its chain for
// errors.Is and errors.As (a *pgconn.PgError stays reachable).
type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.secret, "xxxxx")
}

func (e *redactedError) Unwrap() error { return e.err }

func redact(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	return &redactedError{err: err, secret: secret}
}
