package ledger_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// endedHolder names, as NewHolder would, a process of this host that has ended: a child that
// ran and was waited for.
func endedHolder(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s:%d:0badc0de", host, cmd.Process.Pid)
}

// A lease whose holder's process has ended, on any host or container, is taken over at once,
// not after it lapses: the process's ledger session, which held its presence lock, is gone.
func TestTakeLease_TakesOverAtOnceTheLeaseOfAHolderWhoseProcessEnded(t *testing.T) {
	db, ctx, here := openLedgerWithRun(t, "r")
	other := testenv.OpenLedger(t, db.DSN) // another process on the same ledger
	theirs, ours := ledger.NewHolder(), ledger.NewHolder()
	if _, err := other.TakeLease(ctx, "r", theirs, time.Hour); err != nil {
		t.Fatal(err)
	}
	var held *ledger.LeaseHeldError
	if _, err := here.TakeLease(ctx, "r", ours, time.Minute); !errors.As(err, &held) || held.Holder != theirs {
		t.Fatalf("TakeLease over a live holder: %v, want it held by %s", err, theirs)
	}
	if run, err := here.GetRun(ctx, "r"); err != nil || run.Lease == nil || run.Lease.HolderGone {
		t.Fatalf("a live holder's lease reads as %+v, %v; want its holder not gone", run.Lease, err)
	}
	other.Close() // the process ends
	if run, err := here.GetRun(ctx, "r"); err != nil || run.Lease == nil || !run.Lease.HolderGone {
		t.Fatalf("the ended holder's lease reads as %+v, %v; want its holder gone", run.Lease, err)
	}
	if _, err := here.TakeLease(ctx, "r", ours, time.Minute); err != nil {
		t.Fatalf("TakeLease over an ended holder, an hour before its lease lapses: %v", err)
	}
	events, err := here.Events(ctx, "r", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Kind != "lease-taken" || last.Detail["previous_holder"] != theirs || last.Detail["previous_holder_gone"] != true {
		t.Fatalf("last event %+v, want lease-taken from %s, gone", last, theirs)
	}
	// The ended holder's fenced writes fail, should it come back.
	if err := here.AddCounters(ctx, "r", theirs, ledger.Counters{Relayed: 1}); !errors.Is(err, ledger.ErrLeaseLost) {
		t.Fatalf("a write fenced by the taken-over lease: %v, want ErrLeaseLost", err)
	}
}

func TestNewHolder_HasAToken128BitsLongThatNoOtherHolderShares(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		h := ledger.NewHolder()
		parts := strings.Split(h, ":")
		if token := parts[len(parts)-1]; len(token) != 32 {
			t.Fatalf("holder %q: token %q is not 32 hex digits", h, token)
		}
		if seen[h] {
			t.Fatalf("holder %q given twice", h)
		}
		seen[h] = true
	}
}

// TakeOverLease takes a live lease from the holder its caller names as ended, not after it
// lapses; the event says the previous holder was gone. A lease that moved on meanwhile is not
// taken.
func TestTakeOverLease_TakesALiveLeaseOnlyFromTheHolderNamedAsGone(t *testing.T) {
	_, ctx, l := openLedgerWithRun(t, "r")
	dead, next, third := endedHolder(t), ledger.NewHolder(), ledger.NewHolder()
	if _, err := l.TakeLease(ctx, "r", dead, time.Hour); err != nil {
		t.Fatal(err)
	}
	var held *ledger.LeaseHeldError
	if _, err := l.TakeLease(ctx, "r", next, time.Minute); !errors.As(err, &held) || held.Holder != dead {
		t.Fatalf("TakeLease over a live lease: err = %v, want it held by %s", err, dead)
	}
	// Naming another holder as gone takes nothing.
	if _, err := l.TakeOverLease(ctx, "r", next, third, time.Minute); !errors.As(err, &held) || held.Holder != dead {
		t.Fatalf("TakeOverLease from a holder that does not hold it: err = %v, want it still held by %s", err, dead)
	}
	lease, err := l.TakeOverLease(ctx, "r", next, dead, time.Minute)
	if err != nil {
		t.Fatalf("TakeOverLease from the ended holder: %v", err)
	}
	if lease.Holder != next {
		t.Fatalf("lease = %+v, want held by %s", lease, next)
	}
	// The ended holder's fenced writes now fail: it lost the run.
	if err := l.AddCounters(ctx, "r", dead, ledger.Counters{Relayed: 1}); !errors.Is(err, ledger.ErrLeaseLost) {
		t.Fatalf("a write fenced by the taken-over lease: err = %v, want ErrLeaseLost", err)
	}
	events, err := l.Events(ctx, "r", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Kind != "lease-taken" || last.Detail["previous_holder"] != dead || last.Detail["previous_holder_gone"] != true {
		t.Fatalf("last event %+v, want lease-taken from %s, gone", last, dead)
	}
	if _, err := l.TakeOverLease(ctx, "r", third, "", time.Minute); err == nil {
		t.Fatal("TakeOverLease without a previous holder succeeded")
	}
}

func TestSetStatus_AProcessThatLostItsLeaseCannotMarkFailedARunAnotherFinished(t *testing.T) {
	_, ctx, l := openLedgerWithRun(t, "r")
	paused, next := ledger.NewHolder(), ledger.NewHolder()
	if _, err := l.TakeLease(ctx, "r", paused, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The first process is paused past its lease; the next takes the run over, finishes it and
	// frees the lease.
	if _, err := l.TakeOverLease(ctx, "r", next, paused, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l.SetStatus(ctx, "r", next, ledger.StatusCompleted, nil); err != nil {
		t.Fatalf("the holder completing the run: %v", err)
	}
	if err := l.ReleaseLease(ctx, "r", next); err != nil {
		t.Fatal(err)
	}
	// The paused process wakes up and records the failure it met.
	if err := l.SetStatus(ctx, "r", paused, ledger.StatusFailed, map[string]any{"why": "woke up"}); !errors.Is(err, ledger.ErrLeaseLost) {
		t.Fatalf("the paused process marking the run failed: %v, want ErrLeaseLost", err)
	}
	run, err := l.GetRun(ctx, "r")
	if err != nil || run.Status != ledger.StatusCompleted {
		t.Fatalf("run after the paused process's write: %v, %v; want it completed", run.Status, err)
	}
	events, err := l.Events(ctx, "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if last := events[len(events)-1]; last.Kind != ledger.EventCompleted {
		t.Fatalf("the run's last event is %s, want completed: the refused write appends nothing", last.Kind)
	}
}

func TestAddCountersOnce_AWriteRetriedAfterItCommittedAddsNothing(t *testing.T) {
	_, ctx, l := openLedgerWithRun(t, "r")
	holder, next := ledger.NewHolder(), ledger.NewHolder()
	if _, err := l.TakeLease(ctx, "r", holder, time.Minute); err != nil {
		t.Fatal(err)
	}
	first := ledger.Counters{Staged: 100, Relayed: 90, Resent: 3, Returned: 1}
	// Write 1 commits, its answer is lost, and it is retried: twice in all.
	for range 2 {
		if err := l.AddCountersOnce(ctx, "r", holder, 1, first); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.AddCountersOnce(ctx, "r", holder, 2, ledger.Counters{Staged: 10, Relayed: 10}); err != nil {
		t.Fatal(err)
	}
	// A late retry of write 1, after write 2, adds nothing either.
	if err := l.AddCountersOnce(ctx, "r", holder, 1, first); err != nil {
		t.Fatal(err)
	}
	// The next holder numbers its own writes from 1.
	if err := l.ReleaseLease(ctx, "r", holder); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TakeLease(ctx, "r", next, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l.AddCountersOnce(ctx, "r", next, 1, ledger.Counters{Relayed: 5}); err != nil {
		t.Fatal(err)
	}
	run, err := l.GetRun(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if want := (ledger.Counters{Staged: 110, Relayed: 105, Resent: 3, Returned: 1}); run.Counters != want {
		t.Fatalf("counters = %+v, want %+v: each write added once", run.Counters, want)
	}
}
