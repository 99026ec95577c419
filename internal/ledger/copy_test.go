package ledger_test

import (
	"errors"
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
		if c.status != ledger.StatusRunning {
			if err := l.SetStatus(ctx, c.id, c.status, nil); err != nil {
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
