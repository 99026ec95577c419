package move

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// TestReturn_WaitsOutAStagingMoveOfTheKilledProcess: a process killed while it staged may have
// sent a staging move that the broker runs later (queued on its management lock). The return
// that takes the run over must not put staging back on the source, check it empty and remove it
// while such a move can still land. The late move is played here by the test, moving what the
// source holds into staging once, at the first of two instants: the return begins to wait for
// late moves (where it lands within the grace, as a real one does), or the return has checked
// staging empty and is about to remove it (where it lands when the return waits for nothing). A
// return that waits puts every message back on the source; one that does not removes staging
// with the late move's messages in it.
func TestReturn_WaitsOutAStagingMoveOfTheKilledProcess(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "late.move")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "lm", 300)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	if !transfertest.RunCrashingChild(t, transfertest.CrashPlan{Spec: spec, Point: "stage", At: 1, Chunk: 100, Batch: 50, Source: "source", Target: "target"}) {
		t.Fatal("the child was not killed")
	}
	var (
		once   sync.Once
		landed core.Point
	)
	var runID string
	lateMove := func(at core.Point) {
		once.Do(func() {
			n, err := srcAdmin.MoveMessages(context.WithoutCancel(ctx), artemis.MoveRequest{Queue: src, TargetQueue: StagingQueue(runID)})
			if err != nil {
				t.Errorf("the late move at %s: %v", at, err)
			}
			landed = at
			t.Logf("the late move landed at %s: %d messages into staging", at, n)
		})
	}
	hooks := core.Hooks{Reached: func(p core.Point) {
		if p == core.PointOutwaitingLateMoves || p == core.PointStagingChecked {
			lateMove(p)
		}
	}}
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Hooks: hooks, Graces: core.Graces{LateMove: 3 * time.Second}}}
	runs, err := e.unfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	runID = runs[0].RunID
	began := time.Now()
	if _, err := e.Return(ctx, runID); err != nil {
		t.Fatal(err)
	}
	t.Logf("the return took %s", time.Since(began).Round(time.Millisecond))
	if landed != core.PointOutwaitingLateMoves {
		t.Errorf("the return did not wait for a late staging move (the late move landed at %q)", landed)
	}
	onTarget, onSource := checkOnOneBroker(t, ctx, srcAdmin, tgtAdmin, src, tgt, want, runID)
	t.Logf("after the kill and return: %d on the target, %d back on the source", onTarget, onSource)
}

// TestReturn_AfterAStoppedStagingWaitsForNoLateMove: a process that stops on its own (Ctrl-C,
// an error) had the answer to every staging move it sent, and says so in the staging record; a
// return right after it does not wait.
func TestReturn_AfterAStoppedStagingWaitsForNoLateMove(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "late.none")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "ln", 300)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	first := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
	res := moveInterruptedAfter(ctx, t, first, spec, 100)
	waited := false
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Hooks: core.Hooks{Reached: func(p core.Point) { waited = waited || p == core.PointOutwaitingLateMoves }}}}
	if _, err := e.Return(ctx, res.RunID); err != nil {
		t.Fatal(err)
	}
	if waited {
		t.Error("the return waited for a late staging move of a process that had every answer")
	}
	checkOnOneBroker(t, ctx, srcAdmin, tgtAdmin, src, tgt, want, res.RunID)
}
