package move

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
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
	newEngine := func() *Mover {
		return &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false), Options: core.Options{BatchSize: 100}}}
	}

	// Interrupt the first run after exactly 200 confirmations.
	res := moveInterruptedAfter(ctx, t, newEngine(), spec, 200)
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
	_, err := newEngine().Move(ctx, spec)
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
	transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
	if done.RelayedTotal != int64(len(want)) {
		t.Errorf("the run counts %d relayed in all, want %d", done.RelayedTotal, len(want))
	}
}

// TestResume_ReadsItsRecordsWithoutWaitingOutAnIdleTimeout kills a relaying process with
// SIGKILL at a precise point (before a send, with the batch before it unconfirmed; after a
// confirmation, with the staged copies of its batch partly acknowledged), then resumes the
// run as the provider does (Move finds it). A browse over AMQP ends only by waiting out an
// idle timeout, and a resume that read its records, its manifest and its in-flight batch that
// way spent 14-28 s before it relayed anything. The resume must read all of it without one
// such wait, which no machine's speed can excuse, and still count every message once. The
// time from the resume's start to the target's first confirmation is logged, not asserted.
func TestResume_ReadsItsRecordsWithoutWaitingOutAnIdleTimeout(t *testing.T) {
	env := testenv.Require(t)
	srcAdmin, tgtAdmin := testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	for _, point := range []string{"send", "confirm"} {
		t.Run(point, func(t *testing.T) {
			ctx := transfertest.Ctx(t, 5*time.Minute)
			src, tgt := testenv.UniqueName("resume.start.src"), testenv.UniqueName("resume.start.tgt")
			testenv.FixtureQueue(t, ctx, srcAdmin, src)
			testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
			const messages = 3000
			want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "rs-"+point, messages)
			spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
			// Mid-batch in the fourth batch of 500: two batches, up to 1,000 ids, are in the
			// in-flight record, some of them gone from staging at the confirm point.
			if !transfertest.RunCrashingChild(t, transfertest.CrashPlan{Spec: spec, Point: point, At: 1750, Chunk: 2000, Batch: 500, Source: "source", Target: "target"}) {
				t.Fatal("the child finished the run before its kill point")
			}

			var idleWaits atomic.Int64
			var firstConfirm time.Duration
			var once sync.Once
			start := time.Now()
			e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
				Hooks: core.Hooks{
					BrowseIdle:   func() { idleWaits.Add(1) },
					AfterConfirm: func() { once.Do(func() { firstConfirm = time.Since(start) }) },
				}}}
			res, err := e.Move(ctx, spec)
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			t.Logf("resumed run %s: first confirmation %.3f s after the resume began, all %d relayed in %.3f s (this machine, shared)",
				res.RunID, firstConfirm.Seconds(), res.Relayed, time.Since(start).Seconds())
			if !res.Resumed {
				t.Fatalf("run %s was not resumed: the child's run was not found", res.RunID)
			}
			if n := idleWaits.Load(); n != 0 {
				t.Errorf("reading the run's records waited out a browse's idle timeout %d times", n)
			}
			if res.RelayedTotal != messages {
				t.Errorf("the run counts %d relayed messages in all, want %d", res.RelayedTotal, messages)
			}
			transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
			if d := transfertest.QueueDepth(t, ctx, srcAdmin, src); d != 0 {
				t.Errorf("source still holds %d", d)
			}
			checkNoStaging(t, ctx, srcAdmin, res.RunID)
		})
	}
}
