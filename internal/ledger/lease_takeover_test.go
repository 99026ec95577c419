package ledger_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
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

func TestHolderGone_OnlyAProcessOfThisHostThatEnded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		holder string
		gone   bool
	}{
		{"this process", ledger.NewHolder(), false},
		{"an ended process of this host", endedHolder(t), true},
		{"a process of another host", fmt.Sprintf("not-%s:%d:0badc0de", mustHostname(t), 999999), false},
		{"no pid", mustHostname(t) + ":x:0badc0de", false},
		{"not a holder", "nobody", false},
		{"empty", "", false},
	} {
		if got := ledger.HolderGone(tc.holder); got != tc.gone {
			t.Errorf("%s: HolderGone(%q) = %v, want %v", tc.name, tc.holder, got, tc.gone)
		}
	}
}

func mustHostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A lease whose holder was killed on this host is taken over at once, not after it lapses;
// the event says the previous holder was gone. A lease that moved on meanwhile is not taken.
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
