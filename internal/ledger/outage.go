package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

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
		return serverUnavailable(pgErr.Code)
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

// serverUnavailable reports whether a SQLSTATE says the server, not the request, is the
// problem: a connection exception (class 08), the server shutting down or starting (or in
// recovery), or too many connections.
func serverUnavailable(code string) bool {
	switch code {
	case pgerrcode.AdminShutdown, pgerrcode.CrashShutdown, pgerrcode.CannotConnectNow, pgerrcode.TooManyConnections:
		return true
	}
	return pgerrcode.IsConnectionException(code)
}
