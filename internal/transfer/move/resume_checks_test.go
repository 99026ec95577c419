package move

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/transfertest"
)

// TestResume_RefusedWhenTheTargetNowDropsMessages: a run is interrupted midway, then the target
// address is changed to address-full-policy DROP. Resuming must meet the refusal rules of a new
// run: it is refused with nothing more moved, and once the policy is back it completes exactly.
func TestResume_RefusedWhenTheTargetNowDropsMessages(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 4*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "recheck")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "recheck", 600)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	newEngine := func() *Engine {
		return &Engine{Setup: &core.Setup{Source: transfertest.Client(t, env, "source", false), Target: transfertest.Client(t, env, "target", false), Options: core.Options{BatchSize: 100}}}
	}

	// Interrupt the first run after exactly 200 confirmations.
	first := newEngine()
	runCtx, cancel := context.WithCancel(ctx)
	var confirmed atomic.Int64
	first.Hooks = core.Hooks{AfterConfirm: func() {
		if confirmed.Add(1) == 200 {
			cancel()
		}
	}}
	res, err := first.Move(runCtx, spec)
	cancel()
	if !errors.Is(err, core.ErrInterrupted) {
		t.Fatalf("want an interrupted run, got %+v, %v", res, err)
	}
	// A staging move the first run asked for may still finish on the broker after it stopped
	// waiting, so what is on the source broker is counted as source plus staging.
	onSource := func() int64 {
		return transfertest.QueueDepth(t, ctx, srcAdmin, src) + transfertest.QueueDepth(t, ctx, srcAdmin, StagingQueue(res.RunID))
	}
	left, onTarget := onSource(), transfertest.QueueDepth(t, ctx, tgtAdmin, tgt)
	if left == 0 || onTarget == 0 {
		t.Fatalf("want a run stopped midway: %d left on the source broker, %d on the target", left, onTarget)
	}

	if err := tgtAdmin.AddAddressSettings(ctx, tgt, map[string]any{"addressFullMessagePolicy": "DROP", "maxSizeBytes": int64(10 << 20)}); err != nil {
		t.Fatal(err)
	}
	_, err = newEngine().Move(ctx, spec)
	var refused *core.RefusedError
	if !errors.As(err, &refused) || refused.ResumedRunID != res.RunID {
		t.Fatalf("resuming into a DROP target: want a refusal of run %s, got %v", res.RunID, err)
	}
	if len(refused.Findings) == 0 || refused.Findings[0].Attribute != "target.queue" {
		t.Errorf("want the refusal on target.queue, got %+v", refused.Findings)
	}
	t.Logf("refused: %v", err)
	if s, o := onSource(), transfertest.QueueDepth(t, ctx, tgtAdmin, tgt); s != left || o != onTarget {
		t.Errorf("the refused resume moved messages: source broker %d -> %d, target %d -> %d", left, s, onTarget, o)
	}

	if err := tgtAdmin.RemoveAddressSettings(ctx, tgt); err != nil {
		t.Fatal(err)
	}
	done, err := newEngine().Move(ctx, spec)
	if err != nil || !done.Resumed || done.RunID != res.RunID {
		t.Fatalf("resuming after the policy was restored: %+v, %v", done, err)
	}
	transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, tgt+"::"+tgt))
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
	if done.RelayedTotal != int64(len(want)) {
		t.Errorf("the run counts %d relayed in all, want %d", done.RelayedTotal, len(want))
	}
}
