package transfer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// canaryWarning is what the broker's AMQ222059 warning about the repeated message of canary
// queue name says of it; the broker writes one such warning per canary that worked.
func canaryWarning(name string) string {
	return "applicationProperties={_AMQ_DUPL_ID=studio:canary:" + name + "}"
}

// TestPreflight_TransfersToOneTargetShareOneCanary plans and then runs four transfers from
// four source queues to one target queue at once, as Terraform does with for_each. Engines
// holding one DuplicateProbes send one duplicate-detection canary for all of them, plan and
// apply together, and the target broker's log holds one AMQ222059 warning for it; engines
// without a shared one send a canary per check, each leaving its warning.
func TestPreflight_TransfersToOneTargetShareOneCanary(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin := testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	tgt := testenv.UniqueName("canary.shared.tgt")
	testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
	const n, perQueue = 4, 3
	specs := make([]Spec, n)
	for i := range specs {
		src := testenv.UniqueName("canary.shared.src")
		testenv.FixtureQueue(t, ctx, srcAdmin, src)
		env.Produce(t, "source", artemis.FQQN(src, src), perQueue)
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
			out[i] = &Engine{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false), DuplicateProbes: probes}
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
		res, err := e.Run(ctx, spec)
		if err == nil && res.Relayed != perQueue {
			err = fmt.Errorf("relayed %d, want %d", res.Relayed, perQueue)
		}
		return err
	})
	if got := transfertest.QueueDepth(t, ctx, tgtAdmin, tgt); got != n*perQueue {
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
