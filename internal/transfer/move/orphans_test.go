package move

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// A run killed mid-relay is an orphan with its counts and source; a live run is not, neither
// while it relays nor while it stages.
func TestOrphans_ListsAKilledRunButNotALiveOne(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "orphan")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "o", 600)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}

	// Live: held while staging, then while relaying.
	for _, point := range []string{"stage", "relay"} {
		hold, release := make(chan struct{}), make(chan struct{})
		var once atomic.Bool
		pause := func() {
			if once.CompareAndSwap(false, true) {
				close(hold)
				<-release
			}
		}
		// While staging is held, the relay beside it is held too, so that the messages stay
		// for the kill below.
		h := core.Hooks{AfterStageChunk: pause, BeforeSend: func() { <-release }}
		if point == "relay" {
			h = core.Hooks{BeforeSend: pause}
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { _, err := e.move(runCtx, spec, h); done <- err }()
		<-hold
		runs, _ := e.unfinishedRuns(ctx, &spec)
		if len(runs) != 1 {
			t.Fatalf("runs %+v", runs)
		}
		if o := findOrphan(t, ctx, e, runs[0].RunID); o != nil {
			t.Errorf("a run that is %s was reported as orphaned", point)
		}
		cancel()
		close(release)
		if err := <-done; err == nil {
			t.Errorf("the run cancelled while %s reported success", point)
		}
	}

	// Killed mid-relay: an orphan with the right counts and source.
	if !transfertest.RunCrashingChild(t, transfertest.CrashPlan{Spec: spec, Point: "confirm", At: 150, Chunk: 1000, Batch: 100, Source: "source", Target: "target"}) {
		t.Fatal("the child was not killed")
	}
	runs, _ := e.unfinishedRuns(ctx, &spec)
	if len(runs) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	// The broker drops a dead process's consumers when it notices the closed connection: at
	// once for a killed process on a live host, but asynchronously, so give it a moment.
	var o *Orphan
	for deadline := time.Now().Add(30 * time.Second); o == nil && time.Now().Before(deadline); {
		if o = findOrphan(t, ctx, e, runs[0].RunID); o == nil {
			time.Sleep(500 * time.Millisecond)
		}
	}
	if o == nil {
		t.Fatalf("the killed run %s is not reported within 30 s", runs[0].RunID)
	}
	onTarget := transfertest.QueueDepth(t, ctx, tgtAdmin, tgt)
	// Staged plus on the target is every message, and at most the two batches in flight (of
	// 100) twice: the target confirmed those, the dead process never acknowledged them.
	if o.Manifest == nil || o.SourceQueue != src || o.Messages+onTarget < int64(len(want)) || o.Messages+onTarget > int64(len(want))+200 {
		t.Errorf("orphan %+v; the target holds %d of %d", o, onTarget, len(want))
	}

	// Its manifest lost, it is still listed, with the source read from its messages, and it
	// can be returned with what the broker holds.
	if err := srcAdmin.DestroyQueue(ctx, ManifestQueue(o.RunID)); err != nil {
		t.Fatal(err)
	}
	o = findOrphan(t, ctx, e, runs[0].RunID)
	if o == nil || o.Manifest != nil || o.SourceQueue != src {
		t.Fatalf("without its manifest: %+v", o)
	}
	res, err := e.ReturnOrphan(ctx, o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Returned != o.Messages {
		t.Errorf("returned %d of %d", res.Returned, o.Messages)
	}
	if findOrphan(t, ctx, e, o.RunID) != nil {
		t.Error("the returned run is still listed")
	}
	// Without a manifest there is no in-flight record: the batches that were in flight when the
	// child died may now be on both brokers (at most two batches). Nothing is lost.
	got := append(transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)), transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))...)
	seen := map[string]bool{}
	for _, m := range got {
		seen[transfertest.MessageIDOf(m)] = true
	}
	for _, id := range want {
		if !seen[id] {
			t.Fatalf("message %s was lost", id)
		}
	}
	if extra := len(got) - len(want); extra > 200 {
		t.Errorf("%d messages on both brokers, more than the two in-flight batches of 100", extra)
	}
}
