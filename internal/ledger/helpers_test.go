package ledger_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// testDatabase is a database of the shared test PostgreSQL that only one test uses: created
// for it and dropped when it ends, so tests never see each other's runs.
type testDatabase struct {
	Name  string
	DSN   string    // the new database, as the environment's user
	Admin *pgx.Conn // connected to the new database as the environment's user (a superuser)
}

func randomSuffix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// newTestDatabase creates ledger_test_<random> on the environment's PostgreSQL. It skips the
// test without an environment (or fails it when one is required), like the broker tests.
func newTestDatabase(t *testing.T) *testDatabase {
	t.Helper()
	env := testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, dsn := env.NewDatabase(t, "ledger_test")
	db := &testDatabase{Name: name, DSN: dsn}
	var err error
	db.Admin, err = pgx.Connect(ctx, db.DSN)
	if err != nil {
		t.Fatalf("connecting to database %s: %v", name, err)
	}
	t.Cleanup(func() { db.Admin.Close(context.Background()) })
	return db
}

// openLedgerWithRun opens the ledger on a database of the test's own and records run id, a move
// of queue q to queue q, in it.
func openLedgerWithRun(t *testing.T, id string) (*testDatabase, context.Context, *ledger.Ledger) {
	t.Helper()
	db := newTestDatabase(t)
	ctx := testContext(t)
	l := testenv.OpenLedger(t, db.DSN)
	if err := l.CreateRun(ctx, testRun(id, "q", "q")); err != nil {
		t.Fatal(err)
	}
	return db, ctx, l
}

func testRun(id, source, target string) ledger.Run {
	return ledger.Run{
		ID: id, Fingerprint: "fp-" + id, Mode: ledger.ModeCopy,
		SourceBroker: "eu", SourceQueue: source, TargetBroker: "us", TargetQueue: target,
		Filter: "color = 'red'", T0: time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC),
		CreatedBy: ledger.Creator{User: "ops", Host: "ci-7", Workspace: "prod"},
	}
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// dsnVia is dsn with its host and port replaced by addr.
func dsnVia(t *testing.T, dsn, addr string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

func hostPort(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
