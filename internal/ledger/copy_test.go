package ledger_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

func TestRecordCopied_IsFencedByTheLeaseAndCountsEachIdentityOnce(t *testing.T) {
	_, ctx, l := openLedgerWithRun(t, "c")
	a, b := ledger.NewHolder(), ledger.NewHolder()
	if _, err := l.TakeLease(ctx, "c", a, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n, err := l.RecordCopied(ctx, "c", a, []int64{1, 2, 3}); err != nil || n != 3 {
		t.Fatalf("first batch: %d new, %v", n, err)
	}
	// A batch resent after an interruption overlaps the one recorded: only the new ids count.
	if n, err := l.RecordCopied(ctx, "c", a, []int64{3, 4, -5}); err != nil || n != 2 {
		t.Fatalf("overlapping batch: %d new, %v", n, err)
	}
	// Another process without the lease records nothing.
	if n, err := l.RecordCopied(ctx, "c", b, []int64{6}); !errors.Is(err, ledger.ErrLeaseLost) || n != 0 {
		t.Fatalf("a holder without the lease: %d new, err = %v, want ErrLeaseLost", n, err)
	}
	done, err := l.CopiedAmong(ctx, "c", []int64{1, 4, -5, 6})
	if err != nil || len(done) != 3 || done[6] {
		t.Fatalf("CopiedAmong = %v, %v; want 1, 4 and -5 only", done, err)
	}
	run, err := l.GetRun(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if run.Counters.Relayed != 5 {
		t.Fatalf("relayed counter = %d, want the 5 distinct identities recorded", run.Counters.Relayed)
	}
}

func TestUnfinishedCopies_ListsOnlyCopiesNeitherCompletedNorAbandonedOldestFirst(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	l := testenv.OpenLedger(t, db.DSN)
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		id     string
		mode   ledger.Mode
		status ledger.Status
	}{
		{"late", ledger.ModeCopy, ledger.StatusInterrupted},
		{"early", ledger.ModeCopy, ledger.StatusRunning},
		{"failed", ledger.ModeCopy, ledger.StatusFailed},
		{"done", ledger.ModeCopy, ledger.StatusCompleted},
		{"gone", ledger.ModeCopy, ledger.StatusAbandoned},
		{"a-move", ledger.ModeMove, ledger.StatusRunning},
	} {
		r := testRun(c.id, "q", "q")
		r.Fingerprint, r.Mode = "fp", c.mode
		r.T0 = t0.Add(time.Duration(i) * time.Minute)
		if c.id == "early" {
			r.T0 = t0.Add(-time.Hour)
		}
		r.SourceNodeID, r.TargetNodeID = "src-node", "tgt-node"
		if err := l.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		// Several unfinished copies of one transfer are what a ledger from before migration 0003
		// may hold: each run here gives up its claim on the transfer, as those never had one.
		if _, err := db.Admin.Exec(ctx, `UPDATE artemis_transfer.runs SET claims_transfer = false WHERE run_id = $1`, c.id); err != nil {
			t.Fatal(err)
		}
		if c.status != ledger.StatusRunning {
			if err := l.SetStatus(ctx, c.id, "", c.status, nil); err != nil {
				t.Fatalf("setting %s to %s: %v", c.id, c.status, err)
			}
		}
	}
	runs, err := l.UnfinishedCopies(ctx, "fp")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
		if r.SourceNodeID != "src-node" || r.TargetNodeID != "tgt-node" {
			t.Errorf("run %s is pinned to %q and %q, want the nodes it was created with", r.ID, r.SourceNodeID, r.TargetNodeID)
		}
	}
	if want := []string{"early", "late", "failed"}; len(ids) != len(want) || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
		t.Fatalf("unfinished copies = %v, want %v", ids, want)
	}
	kinds, err := l.Events(ctx, "gone", 0, 0)
	if err != nil || kinds[len(kinds)-1].Kind != ledger.EventAbandoned {
		t.Fatalf("the abandoned run's events = %v, %v; want it to end with %q", kinds, err, ledger.EventAbandoned)
	}
	if n, err := l.PurgeRunsBefore(ctx, time.Now().Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("PurgeRunsBefore = %d, %v; want the completed and the abandoned run", n, err)
	}
}

func TestCreateRun_ACopyOfATransferWithAnUnfinishedCopyIsRefusedNamingIt(t *testing.T) {
	_, ctx, l := openLedgerWithRun(t, "first")
	holder := ledger.NewHolder()
	if _, err := l.TakeLease(ctx, "first", holder, time.Minute); err != nil {
		t.Fatal(err)
	}
	second := testRun("second", "q", "q")
	second.Fingerprint = "fp-first"
	err := l.CreateRun(ctx, second)
	var unfinished *ledger.UnfinishedCopyError
	if !errors.As(err, &unfinished) || unfinished.RunID != "first" || unfinished.Holder != holder {
		t.Fatalf("a second copy of the transfer: %v; want an *UnfinishedCopyError naming run first and %s", err, holder)
	}
	if _, err := l.GetRun(ctx, "second"); !errors.Is(err, ledger.ErrRunNotFound) {
		t.Fatalf("the refused copy is in the ledger: %v", err)
	}
	// A move of the same fingerprint is not a copy; an interrupted or failed copy still claims.
	move := testRun("a-move", "q", "q")
	move.Fingerprint, move.Mode = "fp-first", ledger.ModeMove
	if err := l.CreateRun(ctx, move); err != nil {
		t.Fatalf("a move of the same fingerprint: %v", err)
	}
	for _, s := range []ledger.Status{ledger.StatusInterrupted, ledger.StatusFailed} {
		if err := l.SetStatus(ctx, "first", holder, s, nil); err != nil {
			t.Fatal(err)
		}
		if err := l.CreateRun(ctx, second); !errors.As(err, &unfinished) {
			t.Fatalf("a second copy while the first is %s: %v; want an *UnfinishedCopyError", s, err)
		}
	}
	// Once the first copy is finished, the transfer may be copied again.
	if err := l.SetStatus(ctx, "first", holder, ledger.StatusAbandoned, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.CreateRun(ctx, second); err != nil {
		t.Fatalf("a copy after the first was abandoned: %v", err)
	}
}

func TestMigrate_ALedgerHoldingTwoUnfinishedCopiesOfOneTransferUpgradesAndTheOldestClaimsIt(t *testing.T) {
	db := newTestDatabase(t)
	ctx := testContext(t)
	// A ledger at schema version 2, as a provider before migration 0003 left it, holding two
	// unfinished copies of one transfer (two applies at once could record them).
	if _, err := db.Admin.Exec(ctx, `CREATE SCHEMA artemis_transfer; CREATE TABLE artemis_transfer.schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for v, name := range []string{"0001_init.sql", "0002_copy_runs.sql"} {
		sql, err := os.ReadFile("migrations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Admin.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("applying %s: %v", name, err)
		}
		if _, err := db.Admin.Exec(ctx, `INSERT INTO artemis_transfer.schema_migrations (version, name) VALUES ($1, $2)`, v+1, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"older", "newer"} {
		if _, err := db.Admin.Exec(ctx, `INSERT INTO artemis_transfer.runs (run_id, fingerprint, mode, source_broker, source_queue,
			target_broker, target_queue, t0, status) VALUES ($1, 'fp', 'copy', 'eu', 'q', 'us', 'q', now(), 'interrupted')`, id); err != nil {
			t.Fatal(err)
		}
	}
	l := testenv.OpenLedger(t, db.DSN)
	runs, err := l.UnfinishedCopies(ctx, "fp")
	if err != nil || len(runs) != 2 {
		t.Fatalf("unfinished copies after the upgrade: %v, %v; want both kept", runs, err)
	}
	for _, r := range runs {
		if r.CopyIdentity != 1 {
			t.Errorf("run %s recorded before identity versions reads identity %d, want 1: a resume must find what it copied", r.ID, r.CopyIdentity)
		}
	}
	third := testRun("third", "q", "q")
	third.Fingerprint = "fp"
	var unfinished *ledger.UnfinishedCopyError
	if err := l.CreateRun(ctx, third); !errors.As(err, &unfinished) || unfinished.RunID != "older" {
		t.Fatalf("a new copy of the transfer after the upgrade: %v; want an *UnfinishedCopyError naming run older", err)
	}
}
