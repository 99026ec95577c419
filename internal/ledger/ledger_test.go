package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// The engine uses the ledger through an interface of its own; this is the shape it needs, and
// *ledger.Ledger must keep fitting it.
var _ interface {
	CreateRun(context.Context, ledger.Run) error
	GetRun(context.Context, string) (ledger.Run, error)
	SetStatus(context.Context, string, string, ledger.Status, map[string]any) error
	AddCounters(context.Context, string, string, ledger.Counters) error
	AddCountersOnce(context.Context, string, string, int64, ledger.Counters) error
	AppendEvent(context.Context, string, ledger.EventKind, map[string]any) error
	TakeLease(context.Context, string, string, time.Duration) (ledger.Lease, error)
	RenewLease(context.Context, string, string, time.Duration) (ledger.Lease, error)
	ReleaseLease(context.Context, string, string) error
	RecordCopied(context.Context, string, string, []int64) (int64, error)
	UnfinishedCopies(context.Context, string) ([]ledger.Run, error)
	CopiedAmong(context.Context, string, []int64) (map[int64]bool, error)
} = (*ledger.Ledger)(nil)

func TestOpen_MigratesOnceEvenWhenTwoOpenAtOnce(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := ledger.Open(ctx, db.DSN)
			if err == nil {
				l.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open %d: %v", i, err)
		}
	}
	var versions, maxVersion int
	var firstApplied time.Time
	if err := db.Admin.QueryRow(ctx, `SELECT count(*), max(version), min(applied_at) FROM artemis_transfer.schema_migrations`).
		Scan(&versions, &maxVersion, &firstApplied); err != nil {
		t.Fatal(err)
	}
	if versions != ledger.SchemaVersion() || maxVersion != ledger.SchemaVersion() {
		t.Fatalf("schema_migrations holds %d versions up to %d, want each of 1..%d once", versions, maxVersion, ledger.SchemaVersion())
	}

	// A third Open finds nothing to do and changes nothing.
	l := testenv.OpenLedger(t, db.DSN)
	if err := l.CreateRun(ctx, testRun("r1", "orders", "orders")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	testenv.OpenLedger(t, db.DSN)
	var again int
	var applied time.Time
	if err := db.Admin.QueryRow(ctx, `SELECT count(*), min(applied_at) FROM artemis_transfer.schema_migrations`).Scan(&again, &applied); err != nil {
		t.Fatal(err)
	}
	if again != versions || !applied.Equal(firstApplied) {
		t.Fatalf("reopening changed schema_migrations: %d rows applied at %s, was %d at %s", again, applied, versions, firstApplied)
	}
	if _, err := testenv.OpenLedger(t, db.DSN).GetRun(ctx, "r1"); err != nil {
		t.Fatalf("a run recorded before reopening is gone: %v", err)
	}
}

func TestOpen_RefusesASchemaNewerThanItKnows(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	testenv.OpenLedger(t, db.DSN).Close()
	newer := ledger.SchemaVersion() + 7
	if _, err := db.Admin.Exec(ctx, `INSERT INTO artemis_transfer.schema_migrations (version, name) VALUES ($1, 'from_the_future.sql')`, newer); err != nil {
		t.Fatal(err)
	}

	l, err := ledger.Open(ctx, db.DSN)
	if err == nil {
		l.Close()
		t.Fatal("Open accepted a schema newer than it knows")
	}
	want := fmt.Sprintf("ledger schema version %d is newer than this provider knows (%d): upgrade the provider", newer, ledger.SchemaVersion())
	if !errors.Is(err, ledger.ErrSchemaTooNew) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open error = %v, want ErrSchemaTooNew saying %q", err, want)
	}
}

func TestRuns_CreateGetAndListByQueueAndStatus(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	l := testenv.OpenLedger(t, db.DSN)

	a := testRun("a", "orders", "orders.copy")
	a.SelectedIDs = 0
	b := testRun("b", "orders", "archive")
	b.Mode, b.Filter, b.SelectedIDs = ledger.ModeMove, "", 3
	c := testRun("c", "invoices", "archive")
	c.TargetBroker = "asia"
	for _, r := range []ledger.Run{a, b, c} {
		if err := l.CreateRun(ctx, r); err != nil {
			t.Fatalf("CreateRun %s: %v", r.ID, err)
		}
	}
	if err := l.CreateRun(ctx, a); !errors.Is(err, ledger.ErrRunExists) {
		t.Fatalf("creating run a twice: err = %v, want ErrRunExists", err)
	}
	if err := l.SetStatus(ctx, "b", "", ledger.StatusCompleted, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.SetStatus(ctx, "c", "", ledger.StatusInterrupted, map[string]any{"why": "target full"}); err != nil {
		t.Fatal(err)
	}

	got, err := l.GetRun(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode != ledger.ModeMove || got.SourceBroker != "eu" || got.SourceQueue != "orders" || got.TargetBroker != "us" ||
		got.TargetQueue != "archive" || got.SelectedIDs != 3 || got.Filter != "" || !got.T0.Equal(b.T0) ||
		got.Status != ledger.StatusCompleted || got.Fingerprint != "fp-b" || got.CreatedBy != b.CreatedBy ||
		got.Lease != nil || got.CreatedAt.IsZero() || got.UpdatedAt.Before(got.CreatedAt) {
		t.Fatalf("GetRun(b) = %+v, want what was created, completed, with no lease", got)
	}
	if _, err := l.GetRun(ctx, "nope"); !errors.Is(err, ledger.ErrRunNotFound) {
		t.Fatalf("GetRun of an unknown run: err = %v, want ErrRunNotFound", err)
	}

	for _, tc := range []struct {
		name   string
		filter ledger.RunFilter
		want   []string // newest first
	}{
		{"all", ledger.RunFilter{}, []string{"c", "b", "a"}},
		{"by source queue", ledger.RunFilter{SourceQueue: "orders"}, []string{"b", "a"}},
		{"by target queue", ledger.RunFilter{TargetQueue: "archive"}, []string{"c", "b"}},
		{"by target broker", ledger.RunFilter{TargetBroker: "asia"}, []string{"c"}},
		{"by status", ledger.RunFilter{Statuses: []ledger.Status{ledger.StatusRunning, ledger.StatusInterrupted}}, []string{"c", "a"}},
		{"by queue and status", ledger.RunFilter{SourceQueue: "orders", Statuses: []ledger.Status{ledger.StatusCompleted}}, []string{"b"}},
		{"limit", ledger.RunFilter{Limit: 2}, []string{"c", "b"}},
		{"nothing", ledger.RunFilter{TargetQueue: "none"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := l.ListRuns(ctx, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.want) {
				t.Fatalf("ListRuns(%+v) = %v, want %v", tc.filter, ids, tc.want)
			}
		})
	}

	// A constraint the database enforces comes back with its SQL state.
	bad := testRun("bad", "q", "q")
	bad.Mode = "teleport"
	err = l.CreateRun(ctx, bad)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" || !strings.Contains(err.Error(), "recording run bad") {
		t.Fatalf("CreateRun with an unknown mode: err = %v, want a check violation (23514) saying what was done", err)
	}
}

func TestCounters_AddUpPerBatchAndAreFencedByTheLease(t *testing.T) {
	_, ctx, l := openLedgerWithRun(t, "r")
	holder := ledger.NewHolder()
	if _, err := l.TakeLease(ctx, "r", holder, time.Minute); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := l.AddCounters(ctx, "r", holder, ledger.Counters{Staged: 100, Relayed: 90, Resent: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.AddCounters(ctx, "r", "", ledger.Counters{Returned: 10}); err != nil {
		t.Fatal(err)
	}
	err := l.AddCounters(ctx, "r", "someone-else", ledger.Counters{Staged: 1000})
	if !errors.Is(err, ledger.ErrLeaseLost) || !strings.Contains(err.Error(), holder) {
		t.Fatalf("AddCounters by a process without the lease: err = %v, want ErrLeaseLost naming %s", err, holder)
	}
	if err := l.AddCounters(ctx, "nope", "", ledger.Counters{Staged: 1}); !errors.Is(err, ledger.ErrRunNotFound) {
		t.Fatalf("AddCounters on an unknown run: err = %v, want ErrRunNotFound", err)
	}
	r, err := l.GetRun(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if want := (ledger.Counters{Staged: 500, Relayed: 450, Resent: 5, Returned: 10}); r.Counters != want {
		t.Fatalf("counters = %+v, want %+v (the refused write must not count)", r.Counters, want)
	}
}

func TestEvents_AreReadInTheOrderAppendedAndCannotBeChanged(t *testing.T) {
	db, ctx, l := openLedgerWithRun(t, "r")
	for i := 1; i <= 3; i++ {
		if err := l.AppendEvent(ctx, "r", ledger.EventStaged, map[string]any{"chunk": i, "count": 1000}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.SetStatus(ctx, "r", "", ledger.StatusInterrupted, map[string]any{"why": "context deadline"}); err != nil {
		t.Fatal(err)
	}
	if err := l.SetStatus(ctx, "r", "", ledger.StatusRunning, map[string]any{"by": "ops@ci-8"}); err != nil {
		t.Fatal(err)
	}
	if err := l.AppendEvent(ctx, "r", ledger.EventRelayed, map[string]any{"count": 3000}); err != nil {
		t.Fatal(err)
	}
	if err := l.SetStatus(ctx, "r", "", ledger.StatusCompleted, nil); err != nil {
		t.Fatal(err)
	}

	events, err := l.Events(ctx, "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, e := range events {
		kinds = append(kinds, string(e.Kind))
		if i > 0 && (e.ID <= events[i-1].ID || e.At.Before(events[i-1].At)) {
			t.Fatalf("event %d (%s) is not after event %d", e.ID, e.Kind, events[i-1].ID)
		}
	}
	want := "[created staged staged staged interrupted resumed relayed completed]"
	if fmt.Sprint(kinds) != want {
		t.Fatalf("events = %v, want %s", kinds, want)
	}
	if events[0].Detail["by_user"] != "ops" || events[0].Detail["workspace"] != "prod" {
		t.Fatalf("created event detail = %v, want who created the run", events[0].Detail)
	}
	if events[3].Detail["chunk"] != float64(3) || events[4].Detail["why"] != "context deadline" || events[5].Detail["by"] != "ops@ci-8" {
		t.Fatalf("event details = %v / %v / %v, want what was appended", events[3].Detail, events[4].Detail, events[5].Detail)
	}

	// Paging from the last id read.
	page, err := l.Events(ctx, "r", events[5].ID, 1)
	if err != nil || len(page) != 1 || page[0].ID != events[6].ID {
		t.Fatalf("Events after %d, limit 1 = %v, %v; want event %d", events[5].ID, page, err, events[6].ID)
	}

	_, err = db.Admin.Exec(ctx, `UPDATE artemis_transfer.events SET kind = 'completed' WHERE id = $1`, events[4].ID)
	if err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("changing an event: err = %v, want a refusal (the log is append-only)", err)
	}
}

func TestLease_ASecondHolderIsRefusedNamingTheFirstAndSinceWhen(t *testing.T) {
	db, ctx, l := openLedgerWithRun(t, "r")
	first, second := ledger.NewHolder(), ledger.NewHolder()
	if first == second {
		t.Fatalf("two holders of one process are both named %s", first)
	}
	lease, err := l.TakeLease(ctx, "r", first, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if lease.Holder != first || !lease.ExpiresAt.After(lease.TakenAt) {
		t.Fatalf("lease = %+v", lease)
	}

	// The second holder is refused, from another connection pool as another machine would be.
	other := testenv.OpenLedger(t, db.DSN)
	_, err = other.TakeLease(ctx, "r", second, time.Minute)
	var held *ledger.LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("second TakeLease: err = %v, want *LeaseHeldError", err)
	}
	if held.Holder != first || !held.Since.Equal(lease.TakenAt) || !held.ExpiresAt.Equal(lease.ExpiresAt) {
		t.Fatalf("refusal names %s since %s (expires %s), want %s since %s (expires %s)",
			held.Holder, held.Since, held.ExpiresAt, first, lease.TakenAt, lease.ExpiresAt)
	}
	if msg := err.Error(); !strings.Contains(msg, first) || !strings.Contains(msg, lease.TakenAt.UTC().Format(time.RFC3339)) {
		t.Fatalf("refusal %q does not name the holder and since when", msg)
	}

	// The first holder taking it again extends it and keeps since when it holds it.
	again, err := l.TakeLease(ctx, "r", first, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !again.TakenAt.Equal(lease.TakenAt) || !again.ExpiresAt.After(lease.ExpiresAt) {
		t.Fatalf("retaking = %+v, want TakenAt %s kept and expiry after %s", again, lease.TakenAt, lease.ExpiresAt)
	}
	r, err := l.GetRun(ctx, "r")
	if err != nil || r.Lease == nil || r.Lease.Holder != first {
		t.Fatalf("GetRun lease = %+v, %v; want held by %s", r.Lease, err, first)
	}

	// Released, the run is free for the second holder at once.
	if err := l.ReleaseLease(ctx, "r", second); err != nil { // not its lease: nothing happens
		t.Fatal(err)
	}
	if err := l.ReleaseLease(ctx, "r", first); err != nil {
		t.Fatal(err)
	}
	if _, err := other.TakeLease(ctx, "r", second, time.Minute); err != nil {
		t.Fatalf("TakeLease after release: %v", err)
	}
	if _, err := l.TakeLease(ctx, "nope", first, time.Minute); !errors.Is(err, ledger.ErrRunNotFound) {
		t.Fatalf("TakeLease on an unknown run: err = %v, want ErrRunNotFound", err)
	}
}

func TestLease_RacingHoldersOnlyOneWins(t *testing.T) {
	_, ctx, l := openLedgerWithRun(t, "r")
	const racers = 8
	var wg sync.WaitGroup
	results := make([]error, racers)
	holders := make([]string, racers)
	start := make(chan struct{})
	for i := range racers {
		holders[i] = ledger.NewHolder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, results[i] = l.TakeLease(ctx, "r", holders[i], time.Minute)
		}()
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range results {
		var held *ledger.LeaseHeldError
		switch {
		case err == nil:
			if winner != "" {
				t.Fatalf("both %s and %s took the lease", winner, holders[i])
			}
			winner = holders[i]
		case !errors.As(err, &held):
			t.Fatalf("racer %d: %v", i, err)
		}
	}
	if winner == "" {
		t.Fatal("no racer took the free lease")
	}
	for i, err := range results {
		var held *ledger.LeaseHeldError
		if err != nil && errors.As(err, &held) && held.Holder != winner {
			t.Fatalf("racer %d was refused naming %s, but %s holds the lease", i, held.Holder, winner)
		}
	}
}

func TestLease_AfterExpiryANewHolderTakesOverAndTheOldOneLearnsItLostIt(t *testing.T) {
	db, ctx, l := openLedgerWithRun(t, "r")
	old, successor := ledger.NewHolder(), ledger.NewHolder()
	lease, err := l.TakeLease(ctx, "r", old, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Wait, bounded, until the database's clock is past the expiry (a condition, not a guess).
	deadline := time.Now().Add(30 * time.Second)
	for {
		var expired bool
		if err := db.Admin.QueryRow(ctx, `SELECT now() > $1`, lease.ExpiresAt).Scan(&expired); err != nil {
			t.Fatal(err)
		}
		if expired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lease did not expire within 30 s by the database's clock")
		}
		time.Sleep(50 * time.Millisecond)
	}

	taken, err := l.TakeLease(ctx, "r", successor, time.Minute)
	if err != nil {
		t.Fatalf("TakeLease over an expired lease: %v", err)
	}
	if !taken.TakenAt.After(lease.TakenAt) {
		t.Fatalf("the successor's lease starts at %s, not after the old one's %s", taken.TakenAt, lease.TakenAt)
	}
	_, err = l.RenewLease(ctx, "r", old, time.Minute)
	if !errors.Is(err, ledger.ErrLeaseLost) || !strings.Contains(err.Error(), successor) {
		t.Fatalf("RenewLease by the old holder: err = %v, want ErrLeaseLost naming %s", err, successor)
	}
	renewed, err := l.RenewLease(ctx, "r", successor, 2*time.Minute)
	if err != nil || !renewed.ExpiresAt.After(taken.ExpiresAt) || !renewed.TakenAt.Equal(taken.TakenAt) {
		t.Fatalf("RenewLease by the holder = %+v, %v; want a later expiry than %s", renewed, err, taken.ExpiresAt)
	}

	events, err := l.Events(ctx, "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	for _, e := range events {
		switch e.Kind {
		case ledger.EventLeaseTaken:
			log = append(log, fmt.Sprintf("taken by %v from %v", e.Detail["holder"], e.Detail["previous_holder"]))
		case ledger.EventLeaseLost:
			log = append(log, fmt.Sprintf("lost by %v to %v", e.Detail["holder"], e.Detail["now_held_by"]))
		}
	}
	want := fmt.Sprint([]string{"taken by " + old + " from <nil>", "taken by " + successor + " from " + old, "lost by " + old + " to " + successor})
	if fmt.Sprint(log) != want {
		t.Fatalf("lease events = %v, want %s", log, want)
	}
}

func TestCopied_100000IdsInBatchesAreRecordedAndFoundWithMemoryBoundedPerBatch(t *testing.T) {
	db, ctx, l := openLedgerWithRun(t, "copy")
	if err := l.CreateRun(ctx, testRun("other", "q", "q")); err != nil {
		t.Fatal(err)
	}
	const total, batch = 100_000, 5_000
	// Broker message ids are large and sparse: every third id from a high base.
	id := func(i int) int64 { return 1<<40 + int64(i)*3 }
	ids := make([]int64, batch)
	var peakHeap uint64
	sampleHeap := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peakHeap = max(peakHeap, m.HeapAlloc)
	}

	started := time.Now()
	for b := 0; b < total/batch; b++ {
		for i := range ids {
			ids[i] = id(b*batch + i)
		}
		if n, err := l.RecordCopied(ctx, "copy", "", ids); err != nil || n != batch {
			t.Fatalf("RecordCopied batch %d: %d new, %v", b, n, err)
		}
		sampleHeap()
	}
	recordTime := time.Since(started)
	// A batch repeated after an interruption is harmless, and another run's ids are its own.
	if n, err := l.RecordCopied(ctx, "copy", "", ids); err != nil || n != 0 {
		t.Fatalf("RecordCopied of a batch again: %d new, %v", n, err)
	}
	if _, err := l.RecordCopied(ctx, "other", "", []int64{id(0), id(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RecordCopied(ctx, "nope", "", []int64{1}); !errors.Is(err, ledger.ErrRunNotFound) {
		t.Fatalf("RecordCopied on an unknown run: err = %v, want ErrRunNotFound", err)
	}

	// Ask about 110,000 ids, 10,000 of them never copied, a batch at a time.
	started = time.Now()
	found := 0
	for b := 0; b < (total+10_000)/batch; b++ {
		for i := range ids {
			ids[i] = id(b*batch + i)
		}
		done, err := l.CopiedAmong(ctx, "copy", ids)
		if err != nil {
			t.Fatalf("CopiedAmong batch %d: %v", b, err)
		}
		if len(done) > batch {
			t.Fatalf("CopiedAmong answered %d ids for a batch of %d", len(done), batch)
		}
		for _, x := range ids {
			want := (x-1<<40)/3 < total
			if done[x] != want {
				t.Fatalf("id %d copied = %v, want %v", x, done[x], want)
			}
		}
		found += len(done)
		sampleHeap()
	}
	lookupTime := time.Since(started)
	if found != total {
		t.Fatalf("CopiedAmong found %d copied ids, want %d", found, total)
	}
	if done, err := l.CopiedAmong(ctx, "other", []int64{id(0), id(1), id(2)}); err != nil || len(done) != 2 {
		t.Fatalf("CopiedAmong of the other run = %v, %v; want its 2 ids only", done, err)
	}

	var rows, bytes int64
	if _, err := db.Admin.Exec(ctx, `VACUUM ANALYZE artemis_transfer.copied`); err != nil {
		t.Fatal(err)
	}
	if err := db.Admin.QueryRow(ctx, `SELECT (SELECT count(*) FROM artemis_transfer.copied),
		pg_total_relation_size('artemis_transfer.copied')`).Scan(&rows, &bytes); err != nil {
		t.Fatal(err)
	}
	if rows != total+2 {
		t.Fatalf("the copied table holds %d rows, want %d", rows, total+2)
	}
	t.Logf("recorded %d ids in batches of %d in %s (%.0f ids/s), looked up %d in %s (%.0f ids/s); "+
		"copied table with its primary key: %d bytes, %.1f bytes per id; peak Go heap %.1f MiB",
		total, batch, recordTime, float64(total)/recordTime.Seconds(), total+10_000, lookupTime,
		float64(total+10_000)/lookupTime.Seconds(), bytes, float64(bytes)/float64(rows), float64(peakHeap)/(1<<20))
	if peakHeap > 64<<20 {
		t.Fatalf("peak Go heap %d bytes while working a batch at a time", peakHeap)
	}

	// Retention: a completed run goes with its copied ids; unfinished runs stay however old.
	if err := l.SetStatus(ctx, "copy", "", ledger.StatusCompleted, nil); err != nil {
		t.Fatal(err)
	}
	purged, err := l.PurgeRunsBefore(ctx, time.Now().Add(time.Hour))
	if err != nil || purged != 1 {
		t.Fatalf("PurgeRunsBefore = %d, %v; want the 1 completed run", purged, err)
	}
	if err := db.Admin.QueryRow(ctx, `SELECT count(*) FROM artemis_transfer.copied`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("after purging, the copied table holds %d rows (%v), want the other run's 2", rows, err)
	}
	if _, err := l.GetRun(ctx, "copy"); !errors.Is(err, ledger.ErrRunNotFound) {
		t.Fatalf("the purged run is still there: %v", err)
	}
	if _, err := l.GetRun(ctx, "other"); err != nil {
		t.Fatalf("the running run was purged: %v", err)
	}
}

func TestPurgeRunsBefore_KeepsRecentAndUnfinishedRuns(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	l := testenv.OpenLedger(t, db.DSN)
	for _, id := range []string{"old-done", "old-returned", "old-failed", "old-interrupted", "new-done"} {
		if err := l.CreateRun(ctx, testRun(id, "q", "q")); err != nil {
			t.Fatal(err)
		}
	}
	for id, s := range map[string]ledger.Status{"old-done": ledger.StatusCompleted, "old-returned": ledger.StatusReturned,
		"old-failed": ledger.StatusFailed, "old-interrupted": ledger.StatusInterrupted, "new-done": ledger.StatusCompleted} {
		if err := l.SetStatus(ctx, id, "", s, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Admin.Exec(ctx, `UPDATE artemis_transfer.runs SET updated_at = now() - interval '100 days' WHERE run_id LIKE 'old-%'`); err != nil {
		t.Fatal(err)
	}
	purged, err := l.PurgeRunsBefore(ctx, time.Now().Add(-90*24*time.Hour))
	if err != nil || purged != 2 {
		t.Fatalf("PurgeRunsBefore(90 days ago) = %d, %v; want 2 (the old completed and returned runs)", purged, err)
	}
	runs, err := l.ListRuns(ctx, ledger.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, r := range runs {
		left = append(left, r.ID)
	}
	if fmt.Sprint(left) != "[new-done old-interrupted old-failed]" {
		t.Fatalf("runs left = %v", left)
	}
	var orphans int
	if err := db.Admin.QueryRow(ctx, `SELECT count(*) FROM artemis_transfer.events WHERE run_id LIKE 'old-done' OR run_id = 'old-returned'`).Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("%d events of purged runs left (%v)", orphans, err)
	}
}

// The guide's minimal role: it may connect and owns the schema an administrator created for
// it, nothing more (no CREATE on the database, no superuser).
func TestOpen_WorksAsARoleThatOnlyOwnsItsSchema(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	role := "ledger_role_" + randomSuffix(t)
	for _, stmt := range []string{
		`CREATE ROLE ` + role + ` LOGIN PASSWORD 'role-secret'`,
		`REVOKE ALL ON DATABASE ` + db.Name + ` FROM PUBLIC`,
		`GRANT CONNECT ON DATABASE ` + db.Name + ` TO ` + role,
		`CREATE SCHEMA artemis_transfer AUTHORIZATION ` + role,
	} {
		if _, err := db.Admin.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		// Runs after the ledger closed; the role owns objects only in the test database.
		_, _ = db.Admin.Exec(context.Background(), `DROP OWNED BY `+role)
		if _, err := db.Admin.Exec(context.Background(), `DROP ROLE `+role); err != nil {
			t.Errorf("dropping role %s: %v", role, err)
		}
	})
	dsn := strings.Replace(db.DSN, "postgres@", role+":role-secret@", 1)
	l := testenv.OpenLedger(t, dsn)
	if err := l.CreateRun(ctx, testRun("r", "q", "q")); err != nil {
		t.Fatal(err)
	}
	h := ledger.NewHolder()
	if _, err := l.TakeLease(ctx, "r", h, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l.AddCounters(ctx, "r", h, ledger.Counters{Staged: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RecordCopied(ctx, "r", h, []int64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if done, err := l.CopiedAmong(ctx, "r", []int64{2, 4}); err != nil || !done[2] || done[4] {
		t.Fatalf("CopiedAmong = %v, %v", done, err)
	}
	if err := l.SetStatus(ctx, "r", h, ledger.StatusCompleted, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := l.PurgeRunsBefore(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("PurgeRunsBefore = %d, %v", n, err)
	}
	var owner string
	if err := db.Admin.QueryRow(ctx, `SELECT tableowner FROM pg_tables WHERE schemaname = 'artemis_transfer' AND tablename = 'runs'`).Scan(&owner); err != nil || owner != role {
		t.Fatalf("runs is owned by %q (%v), want %s", owner, err, role)
	}

	// The guide's read-only auditor reads runs and events and may change nothing.
	if err := l.CreateRun(ctx, testRun("audited", "q", "q")); err != nil {
		t.Fatal(err)
	}
	auditor := "ledger_auditor_" + randomSuffix(t)
	for _, stmt := range []string{
		`CREATE ROLE ` + auditor + ` LOGIN`,
		`GRANT CONNECT ON DATABASE ` + db.Name + ` TO ` + auditor,
		`GRANT USAGE ON SCHEMA artemis_transfer TO ` + auditor,
		`GRANT SELECT ON ALL TABLES IN SCHEMA artemis_transfer TO ` + auditor,
	} {
		if _, err := db.Admin.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		_, _ = db.Admin.Exec(context.Background(), `DROP OWNED BY `+auditor)
		if _, err := db.Admin.Exec(context.Background(), `DROP ROLE `+auditor); err != nil {
			t.Errorf("dropping role %s: %v", auditor, err)
		}
	})
	ac, err := pgx.Connect(ctx, strings.Replace(db.DSN, "postgres@", auditor+"@", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close(ctx)
	var runs, events int
	if err := ac.QueryRow(ctx, `SELECT (SELECT count(*) FROM artemis_transfer.runs), (SELECT count(*) FROM artemis_transfer.events)`).Scan(&runs, &events); err != nil || runs != 1 || events != 1 {
		t.Fatalf("the auditor reads %d runs and %d events (%v), want 1 and 1", runs, events, err)
	}
	_, err = ac.Exec(ctx, `DELETE FROM artemis_transfer.runs`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Fatalf("the auditor deleting runs: err = %v, want permission denied (42501)", err)
	}
}

// TestConnect_ReadsTheSchemaWithoutWritingAndMigrateCreatesIt: a connection made for a plan
// reads the schema's version and writes nothing (the database keeps no table), reading a
// missing schema as version 0; Migrate creates it, after which the status is current; a schema
// newer than the provider knows is read as ErrSchemaTooNew.
func TestConnect_ReadsTheSchemaWithoutWritingAndMigrateCreatesIt(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	tables := func() int {
		var n int
		if err := db.Admin.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
			WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	l, err := ledger.ConnectWith(ctx, db.DSN, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, err := l.SchemaStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Missing() || st.Current() || st.Known != ledger.SchemaVersion() {
		t.Errorf("status of an empty database = %+v, want missing (version 0 of %d)", st, ledger.SchemaVersion())
	}
	if n := tables(); n != 0 {
		t.Fatalf("connecting and reading the schema created %d tables", n)
	}

	if err := l.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err = l.SchemaStatus(ctx); err != nil || !st.Current() || st.Missing() {
		t.Errorf("status after Migrate = %+v, %v; want current", st, err)
	}
	if n := tables(); n == 0 {
		t.Error("Migrate created no table")
	}

	if _, err := db.Admin.Exec(ctx, `INSERT INTO artemis_transfer.schema_migrations (version, name) VALUES ($1, 'from_the_future.sql')`,
		ledger.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.SchemaStatus(ctx); !errors.Is(err, ledger.ErrSchemaTooNew) {
		t.Errorf("SchemaStatus of a newer schema: %v, want ErrSchemaTooNew", err)
	}
}
