package move

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/transfertest"
)

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
	srcAdmin, tgtAdmin := transfertest.Client(t, env, "source", true), transfertest.Client(t, env, "target", true)
	for _, point := range []string{"send", "confirm"} {
		t.Run(point, func(t *testing.T) {
			ctx := transfertest.Ctx(t, 5*time.Minute)
			src, tgt := testenv.UniqueName("resume.start.src"), testenv.UniqueName("resume.start.tgt")
			transfertest.FixtureQueue(t, ctx, srcAdmin, src)
			transfertest.FixtureQueue(t, ctx, tgtAdmin, tgt)
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
			e := &Engine{Setup: &core.Setup{Source: transfertest.Client(t, env, "source", false), Target: transfertest.Client(t, env, "target", false),
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
			transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, tgt+"::"+tgt))
			if d := transfertest.QueueDepth(t, ctx, srcAdmin, src); d != 0 {
				t.Errorf("source still holds %d", d)
			}
			checkNoStaging(t, ctx, srcAdmin, res.RunID)
		})
	}
}
