package move

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

func TestMove_PausesWhileThePagingTargetsHeapIsFullAndFinishesOnceConsumersDrainIt(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n = 2000
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "heap")
	if err := tgtAdmin.AddAddressSettings(ctx, tgt, map[string]any{"addressFullMessagePolicy": "PAGE",
		"maxSizeBytes": int64(64 << 10), "pageSizeBytes": int64(32 << 10)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tgtAdmin.RemoveAddressSettings(context.Background(), tgt) })
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "heap", n)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	oomBefore := env.CountInLog(t, "target", "OutOfMemoryError")
	// A pause from 1% of the heap, which any broker's heap is above, before every batch: the
	// test waits on the pause itself, not on how fast the heap fills.
	mover := func() *Mover {
		return &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
			Options: core.Options{BatchSize: 100, HeapPausePercent: 1, HeapCheckInterval: time.Nanosecond}}}
	}

	// The run's time runs out while it is paused: it stops resumable, the rest staged.
	stopCtx, stop := context.WithCancel(ctx)
	first := mover()
	pauses := 0
	first.setup.Hooks.HeapPaused = func() {
		if pauses++; pauses == 1 {
			if _, err := tgtAdmin.Heap(ctx); err != nil {
				t.Errorf("the target's heap at the pause: %v", err)
			}
			if d := transfertest.QueueDepth(t, ctx, tgtAdmin, tgt); d <= 0 || d >= n {
				t.Errorf("the target holds %d messages at the pause, want some of the %d", d, n)
			}
			stop()
		}
	}
	_, err := first.Move(stopCtx, spec)
	if !errors.Is(err, core.ErrInterrupted) {
		t.Fatalf("the move stopped while paused: %v, want ErrInterrupted", err)
	}
	if pauses == 0 {
		t.Fatal("the relay never paused for the paging target's heap")
	}
	t.Logf("stopped while paused: %v", err)

	// Moved again with a consumer draining the target: the run resumes and finishes.
	done := make(chan error, 1)
	var res core.Result
	second := mover()
	go func() {
		var err error
		res, err = second.Move(ctx, spec)
		done <- err
	}()
	got := drainWhile(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt), done)
	if err := <-done; err != nil {
		t.Fatalf("the resumed move: %v", err)
	}
	if !res.Resumed {
		t.Errorf("the second move %+v did not resume the stopped run", res)
	}
	got = append(got, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))...)
	transfertest.CheckSameSet(t, want, got)
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
	if c := env.CountInLog(t, "target", "OutOfMemoryError"); c != oomBefore {
		t.Errorf("the target logged OutOfMemoryError %d times during the move", c-oomBefore)
	}
}
