package transfer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
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

// canaryWarning is what the broker's AMQ222059 warning about the repeated message of canary
// queue name says of it; the broker writes one such warning per canary that worked.
func canaryWarning(name string) string {
	return "applicationProperties={" + propDuplicateID + "=studio:canary:" + name + "}"
}

// TestPreflight_TransfersToOneTargetShareOneCanary plans and then runs four transfers from
// four source queues to one target queue at once, as Terraform does with for_each. Engines
// holding one DuplicateProbes send one duplicate-detection canary for all of them, plan and
// apply together, and the target broker's log holds one AMQ222059 warning for it; engines
// without a shared one send a canary per check, each leaving its warning.
func TestPreflight_TransfersToOneTargetShareOneCanary(t *testing.T) {
	env := testenv.Require(t)
	ctx := testCtx(t, 5*time.Minute)
	srcAdmin, tgtAdmin := testClient(t, env, "source", true), testClient(t, env, "target", true)
	tgt := testenv.UniqueName("canary.shared.tgt")
	fixtureQueue(t, ctx, tgtAdmin, tgt)
	const n, perQueue = 4, 3
	specs := make([]Spec, n)
	for i := range specs {
		src := testenv.UniqueName("canary.shared.src")
		fixtureQueue(t, ctx, srcAdmin, src)
		env.Produce(t, "source", src+"::"+src, perQueue)
		specs[i] = Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}}
	}
	var mu sync.Mutex
	var canaries []string
	probed := func(broker, canary string) {
		mu.Lock()
		defer mu.Unlock()
		if broker != "target" {
			t.Errorf("canary sent to %q", broker)
		}
		canaries = append(canaries, canary)
	}
	// Every engine holds its own clients, as transfers of different brokers would; the probes
	// are keyed by the target's name and node id.
	engines := func(shared bool) []*Engine {
		probes := &DuplicateProbes{Probed: probed}
		out := make([]*Engine, n)
		for i := range out {
			if !shared {
				probes = &DuplicateProbes{Probed: probed}
			}
			out[i] = &Engine{Source: testClient(t, env, "source", false), Target: testClient(t, env, "target", false), DuplicateProbes: probes}
		}
		return out
	}
	each := func(es []*Engine, work func(e *Engine, spec Spec) error) {
		var wg sync.WaitGroup
		for i, e := range es {
			wg.Add(1)
			go func(i int, e *Engine) {
				defer wg.Done()
				if err := work(e, specs[i]); err != nil {
					t.Errorf("transfer %d: %v", i, err)
				}
			}(i, e)
		}
		wg.Wait()
	}
	plan := func(e *Engine, spec Spec) error {
		findings, err := e.Preflight(ctx, spec)
		if err == nil && preflight.HasErrors(findings) {
			err = fmt.Errorf("refused: %+v", findings)
		}
		return err
	}

	// One process: four plans, then four applies (each checks again before it moves).
	shared := engines(true)
	each(shared, plan)
	each(shared, func(e *Engine, spec Spec) error {
		res, err := e.Move(ctx, spec)
		if err == nil && res.Relayed != perQueue {
			err = fmt.Errorf("relayed %d, want %d", res.Relayed, perQueue)
		}
		return err
	})
	if got := queueDepth(t, ctx, tgtAdmin, tgt); got != n*perQueue {
		t.Errorf("the target holds %d messages, want %d", got, n*perQueue)
	}
	if len(canaries) != 1 {
		t.Fatalf("%d canaries for %d plans and %d applies to one target in one process, want 1: %v", len(canaries), n, n, canaries)
	}
	if w := env.CountInLog(t, "target", canaryWarning(canaries[0])); w != 1 {
		t.Errorf("the target's log has %d AMQ222059 warnings for canary %s, want 1", w, canaries[0])
	}

	// Engines that do not share: one canary, and one warning, per plan.
	canaries = nil
	each(engines(false), plan)
	if len(canaries) != n {
		t.Fatalf("%d canaries for %d plans without a shared DuplicateProbes, want %d", len(canaries), n, n)
	}
	for _, c := range canaries {
		if w := env.CountInLog(t, "target", canaryWarning(c)); w != 1 {
			t.Errorf("the target's log has %d AMQ222059 warnings for canary %s, want 1", w, c)
		}
	}
}
