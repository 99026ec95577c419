package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable marks an error as "the ledger's PostgreSQL cannot be reached right now":
// connection refused or lost, the server shutting down or starting (SQLSTATE 57P01, 57P02,
// 57P03), a connection exception (class 08), too many connections (53300), or a retry budget
// spent. The engine treats it as "pause the run and resume it later", never as a failed
// transfer. Match it with errors.Is; the wrapped cause keeps any *pgconn.PgError.
var ErrUnavailable = errors.New("transfer ledger unavailable")

// ErrRunNotFound is returned when the ledger has no run with the given id.
var ErrRunNotFound = errors.New("run not found in the transfer ledger")

// ErrRunExists is returned by CreateRun when the ledger already has a run with that id:
// the caller resumes it (GetRun) instead.
var ErrRunExists = errors.New("run already in the transfer ledger")

// ErrLeaseLost is returned by RenewLease and fenced writes (AddCounters with a holder) when
// the caller no longer holds the run's lease: another process took it over after it expired,
// so the caller must stop working on the run at once.
var ErrLeaseLost = errors.New("lease on the run lost")

// LeaseHeldError is returned by TakeLease when another holder has a live lease on the run:
// another apply (another machine, CI job or state) is working on it right now.
type LeaseHeldError struct {
	RunID string
	// Holder names the process holding the lease (host, pid and a random part; see NewHolder).
	Holder string
	// Since is when the holder took the lease, by the database's clock.
	Since time.Time
	// HeartbeatAt is when the holder last renewed it; ExpiresAt is when it lapses unless
	// renewed again, after which another holder may take the run over.
	HeartbeatAt time.Time
	ExpiresAt   time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("run %s is being worked on by %s since %s (last heartbeat %s): "+
		"wait for that apply to finish; if that process is gone, its lease lapses at %s and the run can be resumed then",
		e.RunID, e.Holder, e.Since.UTC().Format(time.RFC3339), e.HeartbeatAt.UTC().Format(time.RFC3339),
		e.ExpiresAt.UTC().Format(time.RFC3339))
}

// unavailableCodes are SQLSTATEs that say the server, not the request, is the problem.
var unavailableCodes = map[string]bool{
	"57P01": true, // admin_shutdown
	"57P02": true, // crash_shutdown
	"57P03": true, // cannot_connect_now (starting up, or in recovery)
	"53300": true, // too_many_connections
}

// isUnavailable reports whether err says PostgreSQL could not be reached or went away, as
// opposed to refusing the request (a constraint, a permission, a wrong password).
func isUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableCodes[pgErr.Code] || strings.HasPrefix(pgErr.Code, "08")
	}
	// A connection attempt that failed without the server's refusal (that is a PgError,
	// above) is an outage, also when it ran out of time: pgx bounds a connect by the DSN's
	// connect_timeout with a deadline of its own, and a busy or stalled server then looks like
	// a deadline. Only the caller's own cancellation is not.
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) && !errors.Is(err, context.Canceled) {
		return true
	}
	// The caller's own cancellation or deadline is the caller's decision, not an outage.
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	return pgconn.SafeToRetry(err)
}

// RetryWithin runs fn until it succeeds, returns an error that is not ErrUnavailable, or
// budget has passed, backing off from 100 ms up to 2 s between attempts. Each attempt gets a
// context that ends with the budget, so a server that hangs instead of refusing is bounded
// too. When the budget runs out the error is ErrUnavailable (the engine pauses the run); when
// ctx itself ends, ctx's error is returned.
//
// A retried write may have been applied once already when the connection broke after the
// server committed it: wrap idempotent writes (RecordCopied, lease calls), or accept that a
// retried AddCounters or AppendEvent may count twice.
func RetryWithin(ctx context.Context, budget time.Duration, fn func(context.Context) error) error {
	bounded, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	backoff := 100 * time.Millisecond
	attempts := 0
	for {
		attempts++
		err := fn(bounded)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("ledger write abandoned after %d attempt(s): %w", attempts, ctx.Err())
		}
		// An attempt cut short by the budget is an outage too: the server did not answer.
		spent := bounded.Err() != nil
		timedOut := spent && errors.Is(err, context.DeadlineExceeded)
		if !isUnavailable(err) && !timedOut {
			return err
		}
		if !spent {
			select {
			case <-bounded.Done():
			case <-time.After(backoff):
				backoff = min(backoff*2, 2*time.Second)
				continue
			}
			if ctx.Err() != nil {
				return fmt.Errorf("ledger write abandoned after %d attempt(s): %w", attempts, ctx.Err())
			}
		}
		return fmt.Errorf("ledger still unreachable after %s (%d attempt(s)); the run can be resumed when it is back: %w",
			budget, attempts, markUnavailable(err))
	}
}

// markUnavailable adds ErrUnavailable to err's chain unless it is already there.
func markUnavailable(err error) error {
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
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
