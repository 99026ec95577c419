package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

const secret = "s3cret-Ledger-pw"

// fakeAuthServer answers every connection as PostgreSQL does to a wrong password: it asks
// for the password and refuses it with SQLSTATE 28P01. (The shared test PostgreSQL trusts
// local connections, so it cannot refuse a password itself.) It reports each password it
// was sent on got.
func fakeAuthServer(t *testing.T) (addr string, got <-chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	passwords := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				be := pgproto3.NewBackend(c, c)
				startup, err := be.ReceiveStartupMessage()
				if err != nil {
					return
				}
				user := startup.(*pgproto3.StartupMessage).Parameters["user"]
				be.Send(&pgproto3.AuthenticationCleartextPassword{})
				if be.Flush() != nil || be.SetAuthType(pgproto3.AuthTypeCleartextPassword) != nil {
					return
				}
				msg, err := be.Receive()
				if err != nil {
					return
				}
				if pw, ok := msg.(*pgproto3.PasswordMessage); ok {
					select {
					case passwords <- pw.Password:
					default:
					}
				}
				be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01",
					Message: fmt.Sprintf("password authentication failed for user %q", user)})
				_ = be.Flush()
			}()
		}
	}()
	return ln.Addr().String(), passwords
}

func TestOpen_AWrongPasswordIsRefusedNamingHostAndCauseButNotThePassword(t *testing.T) {
	ctx := testContext(t)
	addr, got := fakeAuthServer(t)
	dsn := fmt.Sprintf("postgres://ledger:%s@%s/audit?sslmode=disable", secret, addr)

	_, err := ledger.Open(ctx, dsn)
	if err == nil {
		t.Fatal("Open succeeded against a server that refuses the password")
	}
	if pw := <-got; pw != secret {
		t.Fatalf("the server was sent password %q, want the DSN's", pw)
	}
	msg := err.Error()
	if strings.Contains(msg, secret) {
		t.Fatalf("the error shows the password: %s", msg)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
		t.Fatalf("err = %v, want the server's 28P01 kept", err)
	}
	if errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("a wrong password is not an outage, but err matches ErrUnavailable: %v", err)
	}
	for _, want := range []string{addr, "audit", "ledger", "password authentication failed"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("error %q does not name %q", msg, want)
		}
	}
	t.Logf("wrong password: %s", msg)
}

func TestOpen_AnUnknownRoleOnTheRealServerIsRefusedWithoutShowingThePassword(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	role := "nobody_" + randomSuffix(t)
	dsn := strings.Replace(db.DSN, "postgres@", role+":"+secret+"@", 1)
	_, err := ledger.Open(ctx, dsn)
	if err == nil {
		t.Fatal("Open succeeded as a role that does not exist")
	}
	var pgErr *pgconn.PgError
	if msg := err.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, hostPort(t, db.DSN)) ||
		!strings.Contains(msg, role) || !errors.As(err, &pgErr) || pgErr.Code != "28000" {
		t.Fatalf("err = %s, want 28000 naming host and role, without the password", msg)
	}
}

func TestOpen_AMalformedDSNIsRefusedWithoutShowingThePassword(t *testing.T) {
	ctx := testContext(t)
	for _, dsn := range []string{
		"postgres://ledger:" + secret + "@db.example:notaport/audit",
		"host=db.example port=notaport user=ledger password=" + secret,
	} {
		_, err := ledger.Open(ctx, dsn)
		if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "ledger DSN") {
			t.Fatalf("Open(%s): err = %v, want a DSN error without the password", strings.ReplaceAll(dsn, secret, "xxx"), err)
		}
	}
}

func TestOpen_AnUnreachableServerIsErrUnavailableWithinTheBound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	started := time.Now()
	_, err = ledger.Open(ctx, fmt.Sprintf("postgres://ledger:%s@%s/audit?sslmode=disable", secret, addr))
	took := time.Since(started)
	if err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	if !errors.Is(err, ledger.ErrUnavailable) || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v, want ErrUnavailable naming %s without the password", err, addr)
	}
	if ctx.Err() != nil {
		t.Fatalf("Open took the whole 20 s bound (%s) to report a refused connection", took)
	}
	t.Logf("unreachable in %s: %v", took, err)
}

func TestRetryWithin_PausesWhileTheLedgerIsDownAndResumesWhenItIsBack(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	fwd := testenv.NewProxy(t, hostPort(t, db.DSN))
	l := testenv.OpenLedger(t, dsnVia(t, db.DSN, fwd.Addr()))
	if err := l.CreateRun(ctx, testRun("r", "q", "q")); err != nil {
		t.Fatal(err)
	}

	// Down: a plain call fails as ErrUnavailable, and a bounded retry gives up within its
	// budget with ErrUnavailable, the engine's cue to pause the run.
	fwd.Down()
	if err := l.AddCounters(ctx, "r", "", ledger.Counters{Staged: 1}); !errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("AddCounters with the server down: err = %v, want ErrUnavailable", err)
	}
	const budget = 1500 * time.Millisecond
	started := time.Now()
	attempts := 0
	err := ledger.RetryWithin(ctx, budget, func(ctx context.Context) error {
		attempts++
		return l.AddCounters(ctx, "r", "", ledger.Counters{Staged: 1})
	})
	took := time.Since(started)
	if !errors.Is(err, ledger.ErrUnavailable) || attempts < 2 {
		t.Fatalf("RetryWithin with the server down: err = %v after %d attempts, want ErrUnavailable after retrying", err, attempts)
	}
	if took > budget+5*time.Second {
		t.Fatalf("RetryWithin took %s with a budget of %s", took, budget)
	}
	t.Logf("down: gave up after %s and %d attempts: %v", took, attempts, err)

	// Back during a retry: the write goes through once.
	attempts = 0
	err = ledger.RetryWithin(ctx, time.Minute, func(ctx context.Context) error {
		attempts++
		if attempts == 2 {
			if err := fwd.Up(); err != nil {
				t.Fatal(err)
			}
		}
		return l.AddCounters(ctx, "r", "", ledger.Counters{Staged: 10})
	})
	if err != nil || attempts < 2 {
		t.Fatalf("RetryWithin with the server coming back: err = %v after %d attempts", err, attempts)
	}
	r, err := l.GetRun(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if r.Counters.Staged != 10 {
		t.Fatalf("staged = %d, want 10 (writes refused while the server was down must not count)", r.Counters.Staged)
	}
}

func TestRetryWithin_AServerThatHangsIsBoundedByTheBudget(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	proxy := testenv.NewProxy(t, hostPort(t, db.DSN))
	l := testenv.OpenLedger(t, dsnVia(t, db.DSN, proxy.Addr()))
	if err := l.CreateRun(ctx, testRun("r", "q", "q")); err != nil {
		t.Fatal(err)
	}
	const stall = 6 * time.Second
	proxy.Stall(stall) // connections stay open and silent
	const budget = time.Second
	started := time.Now()
	err := ledger.RetryWithin(ctx, budget, func(ctx context.Context) error {
		_, err := l.GetRun(ctx, "r")
		return err
	})
	took := time.Since(started)
	if !errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("RetryWithin against a silent server: err = %v, want ErrUnavailable", err)
	}
	if took >= stall {
		t.Fatalf("RetryWithin took %s with a budget of %s: it waited for the stalled server", took, budget)
	}
	t.Logf("hanging server: gave up after %s: %v", took, err)
}

func TestRetryWithin_DoesNotRetryARefusal(t *testing.T) {
	refused := &pgconn.PgError{Code: "42501", Message: "permission denied for table runs"}
	attempts := 0
	err := ledger.RetryWithin(context.Background(), time.Minute, func(context.Context) error {
		attempts++
		return fmt.Errorf("recording run r: %w", refused)
	})
	if attempts != 1 || !errors.Is(err, refused) || errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("RetryWithin of a refusal: %d attempts, err = %v; want 1 attempt and the refusal", attempts, err)
	}
	attempts = 0
	err = ledger.RetryWithin(context.Background(), time.Minute, func(context.Context) error {
		attempts++
		if attempts < 3 {
			return fmt.Errorf("recording run r: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"})
		}
		return nil
	})
	if err != nil || attempts != 3 {
		t.Fatalf("RetryWithin of an admin shutdown: %d attempts, err = %v; want success at the 3rd", attempts, err)
	}
}

// A connection the DSN's connect_timeout gives up on (the server accepts but does not answer
// in time, as a busy or stalled one) is an outage: retried within the budget, and the write
// goes through once the server answers again, instead of failing the run.
func TestRetryWithin_RetriesAConnectThatRanIntoTheDSNsConnectTimeout(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	proxy := testenv.NewProxy(t, hostPort(t, db.DSN))
	dsn := dsnVia(t, db.DSN, proxy.Addr())
	if strings.Contains(dsn, "?") {
		dsn += "&connect_timeout=1"
	} else {
		dsn += "?connect_timeout=1"
	}
	l := testenv.OpenLedger(t, dsn)
	if err := l.CreateRun(ctx, testRun("r", "q", "q")); err != nil {
		t.Fatal(err)
	}
	// Every pooled connection goes, and new ones stay silent for longer than connect_timeout.
	const stall = 4 * time.Second
	proxy.Stall(stall)
	proxy.Cut()
	attempts := 0
	var firstErr error
	err := ledger.RetryWithin(ctx, time.Minute, func(ctx context.Context) error {
		attempts++
		err := l.AddCounters(ctx, "r", "", ledger.Counters{Relayed: 1})
		if firstErr == nil {
			firstErr = err
		}
		return err
	})
	if err != nil {
		t.Fatalf("RetryWithin across a stalled server: %v after %d attempts", err, attempts)
	}
	if attempts < 2 || !errors.Is(firstErr, ledger.ErrUnavailable) {
		t.Fatalf("%d attempts, first error %v: want the connect timeout reported as ErrUnavailable and retried", attempts, firstErr)
	}
	t.Logf("stalled server: written after %d attempts; the first failed with: %v", attempts, firstErr)
}
