package core

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// Moves from one source broker share its staging canary: those asking while it is out wait for
// it, and later ones take a passed answer; a refusal or an error is probed again, and so is a
// pass older than the reuse window. Each source broker gets its own.
func TestStagingProbes_MovesFromOneSourceShareAPassedCanary(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	p := StagingProbes{now: func() time.Time { return now }}
	var calls atomic.Int64
	release, started := make(chan struct{}), make(chan struct{})
	var once sync.Once
	// The canary's pass carries an empty, not nil, list of problems: a waiter that holds it got
	// this canary's answer, not a zero value.
	shared := StagingProbe{Problems: []preflight.PermissionProblem{}}
	slow := func(context.Context) StagingProbe {
		calls.Add(1)
		once.Do(func() { close(started) })
		<-release
		return shared
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]StagingProbe, 8)
	wg.Add(1)
	go func() { defer wg.Done(); results[0] = p.Outcome(ctx, "source/n1", slow) }()
	<-started
	for i := 1; i < len(results); i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); results[i] = p.Outcome(ctx, "source/n1", slow) }(i)
	}
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d staging canaries for 8 moves from one source, want 1", n)
	}
	for i, r := range results {
		if !r.passed() || r.Problems == nil {
			t.Errorf("move %d got %+v, want the canary's pass", i, r)
		}
	}

	counting := func(result StagingProbe) func(context.Context) StagingProbe {
		return func(context.Context) StagingProbe { calls.Add(1); return result }
	}
	calls.Store(0)
	p.Outcome(ctx, "source/n1", counting(StagingProbe{}))
	if n := calls.Load(); n != 0 {
		t.Errorf("a move after a passed canary probed %d times, want 0", n)
	}
	p.Outcome(ctx, "other/n2", counting(StagingProbe{}))
	if n := calls.Load(); n != 1 {
		t.Errorf("a move from another source probed %d times, want 1", n)
	}

	refused := StagingProbe{Problems: []preflight.PermissionProblem{{Broker: "b", What: "createQueue"}}}
	failed := StagingProbe{Err: errors.New("broker gone")}
	for _, bad := range []StagingProbe{refused, failed} {
		calls.Store(0)
		key := "bad/" + bad.key()
		p.Outcome(ctx, key, counting(bad))
		got := p.Outcome(ctx, key, counting(StagingProbe{}))
		if n := calls.Load(); n != 2 || !got.passed() {
			t.Errorf("after a canary that found %+v: %d probes and answer %+v, want 2 and the new pass", bad, n, got)
		}
	}

	calls.Store(0)
	now = now.Add(probeReuseWindow + time.Second)
	p.Outcome(ctx, "source/n1", counting(StagingProbe{}))
	if n := calls.Load(); n != 1 {
		t.Errorf("a move after the reuse window probed %d times, want 1", n)
	}

	var none *StagingProbes
	calls.Store(0)
	none.Outcome(ctx, "source/n1", counting(StagingProbe{}))
	none.Outcome(ctx, "source/n1", counting(StagingProbe{}))
	if n := calls.Load(); n != 2 {
		t.Errorf("without StagingProbes two moves probed %d times, want 2", n)
	}
}

// key names a test outcome, so that each gets a key of its own.
func (p StagingProbe) key() string {
	if p.Err != nil {
		return "error"
	}
	return "refused"
}
