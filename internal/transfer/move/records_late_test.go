package move

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// lateRecordReads are graces under which every read of a run's records ends before the broker
// delivers them, as on a broker too loaded to answer a browse in time: the manifest is there,
// and no read sees it.
var lateRecordReads = core.Graces{Start: time.Nanosecond, RecordRead: time.Nanosecond}

// TestMove_ALateManifestReadChangesNothing: a move killed once everything was relayed and its
// staging queue removed has only its manifest queue left; messages produced since are not its
// to move. A next apply that cannot read the manifest in time must stop and change nothing,
// not take the run for one that never started and move everything as a new run; the apply
// after it finishes the same run, and the later messages stay on the source.
func TestMove_ALateManifestReadChangesNothing(t *testing.T) {
	env := testenv.Require(t)
	spec, want, srcAdmin, tgtAdmin, tgt := killMoveAt(t, env, startKill{point: string(core.PointStagingRemoved), at: 1})
	ctx := transfertest.Ctx(t, 3*time.Minute)
	runs, err := (&Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false)}}).unfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	killed := runs[0].RunID
	later := transfertest.ProduceNumbered(t, ctx, srcAdmin, spec.Source.Queue, "later", 20)

	var lateReads atomic.Int64
	late := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Graces: lateRecordReads, Hooks: core.Hooks{BrowseIdle: func() { lateReads.Add(1) }}}}
	res, err := late.Move(ctx, spec)
	t.Logf("the apply whose reads end early (%d reads waited out): %+v, %v", lateReads.Load(), res, err)
	var lateErr *errRecordsLate
	if !errors.As(err, &lateErr) {
		t.Fatalf("the apply that could not read the run's manifest in time went on (run %s, resumed %v, relayed %d) instead of stopping, error %v",
			res.RunID, res.Resumed, res.Relayed, err)
	}
	if _, err := srcAdmin.Queue(ctx, ManifestQueue(killed)); err != nil {
		t.Fatalf("the killed run's manifest queue: %v", err)
	}

	res, err = moveAfterAKill(t, env, spec)
	if err != nil {
		t.Fatalf("the next apply: %v", err)
	}
	if res.RunID != killed || !res.Resumed {
		t.Errorf("the next apply ran %s (resumed %v), not the killed run %s", res.RunID, res.Resumed, killed)
	}
	transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
	transfertest.CheckSameSet(t, later, transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(spec.Source.Queue, spec.Source.Queue)))
	checkNoStaging(t, ctx, srcAdmin, killed)
}

// TestReturnOrphan_ALateManifestReadReturnsNothing: a run killed with batches in flight, which
// the target holds, is returned by an operator while its records cannot be read in time. The
// return must stop rather than return the run as one without a manifest, which ignores its
// in-flight record and puts back on the source messages the target holds; the next return
// settles them, and every message ends on exactly one broker.
func TestReturnOrphan_ALateManifestReadReturnsNothing(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "late.orphan")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "lo", interruptedMessages)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	if !transfertest.RunCrashingChild(t, transfertest.CrashPlan{Spec: spec, Point: "confirm", At: interruptedCrashAt, Chunk: interruptedMessages, Batch: 100, Source: "source", Target: "target"}) {
		t.Fatal("the child was not killed")
	}
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
	runs, err := e.unfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	runID := runs[0].RunID
	late := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false), Graces: lateRecordReads}}
	res, err := late.ReturnOrphan(ctx, runID)
	var lateErr *errRecordsLate
	if !errors.As(err, &lateErr) {
		t.Errorf("the return that could not read the run's manifest in time went on (returned %d, relayed %d), error %v", res.Returned, res.Relayed, err)
	} else {
		t.Logf("the return whose reads end early: %v", err)
		if res, err = e.ReturnOrphan(ctx, runID); err != nil {
			t.Fatal(err)
		}
	}
	onTarget := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	onSource := transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))
	t.Logf("after the return: %d on the target (%d settled by the return), %d back on the source", len(onTarget), res.Relayed+res.Resent, len(onSource))
	transfertest.CheckSameSet(t, want, append(onTarget, onSource...))
	checkNoStaging(t, ctx, srcAdmin, runID)
}
