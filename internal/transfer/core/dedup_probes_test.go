package core

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// countingProbe returns a probe that answers outcome and counts its calls.
func countingProbe(outcome preflight.DedupOutcome, calls *atomic.Int64) func(context.Context) preflight.DuplicateProbe {
	return func(context.Context) preflight.DuplicateProbe {
		calls.Add(1)
		return preflight.DuplicateProbe{Outcome: outcome}
	}
}

func TestDuplicateProbes_ManyTransfersToOneTargetSendOneCanary(t *testing.T) {
	var p DuplicateProbes
	var calls atomic.Int64
	release := make(chan struct{})
	started := make(chan struct{})
	probe := func(context.Context) preflight.DuplicateProbe {
		calls.Add(1)
		close(started)
		<-release // every other transfer asks while this canary is out
		return preflight.DuplicateProbe{Outcome: preflight.DedupWorks}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]preflight.DuplicateProbe, 10)
	wg.Add(1)
	go func() { defer wg.Done(); results[0] = p.outcome(ctx, "target/n1", probe) }()
	<-started
	for i := 1; i < len(results); i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); results[i] = p.outcome(ctx, "target/n1", probe) }(i)
	}
	close(release)
	wg.Wait()
	// And one asking afterwards.
	if got := p.outcome(ctx, "target/n1", probe); got.Outcome != preflight.DedupWorks {
		t.Errorf("a later transfer got %v", got.Outcome)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d canaries for 11 transfers to one target, want 1", n)
	}
	for i, r := range results {
		if r.Outcome != preflight.DedupWorks {
			t.Errorf("transfer %d got %v, want the canary's answer", i, r.Outcome)
		}
	}
}

func TestDuplicateProbes_EachTargetGetsItsOwnCanary(t *testing.T) {
	var p DuplicateProbes
	var calls atomic.Int64
	for _, key := range []string{"target/n1", "other/n2", "target/n1", "other/n2", "target/n3"} {
		p.outcome(context.Background(), key, countingProbe(preflight.DedupWorks, &calls))
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d canaries for three targets, want 3", n)
	}
}

func TestDuplicateProbes_OnlyAWorkingAnswerIsReused(t *testing.T) {
	for _, outcome := range []preflight.DedupOutcome{preflight.DedupDisabled, preflight.DedupUnknown} {
		var p DuplicateProbes
		var calls atomic.Int64
		for i := 0; i < 3; i++ {
			if got := p.outcome(context.Background(), "t/n", countingProbe(outcome, &calls)); got.Outcome != outcome {
				t.Errorf("got %v, want %v", got.Outcome, outcome)
			}
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("outcome %v: %d canaries for three transfers one after the other, want 3 (not reused)", outcome, n)
		}
	}
}

func TestDuplicateProbes_AWorkingAnswerIsReusedForAWhile(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	p := DuplicateProbes{now: func() time.Time { return now }}
	var calls atomic.Int64
	probe := countingProbe(preflight.DedupWorks, &calls)
	p.outcome(context.Background(), "t/n", probe)
	now = now.Add(probeReuseWindow - time.Second)
	p.outcome(context.Background(), "t/n", probe)
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d canaries within the reuse window, want 1", n)
	}
	now = now.Add(2 * time.Second)
	p.outcome(context.Background(), "t/n", probe)
	if n := calls.Load(); n != 2 {
		t.Errorf("%d canaries once the reuse window has passed, want 2", n)
	}
}

func TestDuplicateProbes_AWaiterWhoseContextEndsGetsUnknown(t *testing.T) {
	var p DuplicateProbes
	release, started := make(chan struct{}), make(chan struct{})
	done := make(chan preflight.DuplicateProbe)
	go func() {
		done <- p.outcome(context.Background(), "t/n", func(context.Context) preflight.DuplicateProbe {
			close(started)
			<-release
			return preflight.DuplicateProbe{Outcome: preflight.DedupWorks}
		})
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := p.outcome(ctx, "t/n", nil); got.Outcome != preflight.DedupUnknown {
		t.Errorf("a cancelled waiter got %v, want unknown", got.Outcome)
	}
	close(release)
	if got := <-done; got.Outcome != preflight.DedupWorks {
		t.Errorf("the prober got %v", got.Outcome)
	}
}
