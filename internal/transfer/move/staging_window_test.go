package move

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Staging runs at most stageAheadChunks chunks ahead of the relay: after each staging move the
// staging queue holds less than one chunk more than the window, however slowly the relay goes.
// The relay is slowed by a hook so that, without the window, staging would take the whole
// selection long before the relay did (the bound holds whatever the machine's speed).
func TestMove_StagingRunsAtMostAWindowAheadOfTheRelay(t *testing.T) {
	ctx := transfertest.Ctx(t, 3*time.Minute)
	const messages, chunk = 3000, 100
	f := newMoveFixture(t, ctx, "source", "target", messages)
	e := f.engine(t, core.Options{ChunkSize: chunk, BatchSize: 50})
	var depths []int64
	e.setup.Hooks.AfterStageChunk = func() {
		queues, err := f.srcAdmin.ListQueues(ctx, core.StagingPrefix+f.spec.Key()+"-")
		if err != nil {
			t.Errorf("listing staging: %v", err)
			return
		}
		for _, q := range queues {
			if runIDFromQueue(q.Name) != "" && !strings.HasSuffix(q.Name, manifestSuffix) && !strings.HasSuffix(q.Name, quarantineSuffix) {
				depths = append(depths, q.MessageCount)
			}
		}
	}
	e.setup.Hooks.BeforeSend = func() { time.Sleep(2 * time.Millisecond) }
	// Staging asks the broker for the depth once per staging move, however long it waits: each
	// read costs the source broker CPU.
	var depthReads atomic.Int64
	e.setup.Hooks.StagingDepthRead = func() { depthReads.Add(1) }
	res, err := e.Move(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.RelayedTotal != messages {
		t.Fatalf("relayed %d of %d", res.RelayedTotal, messages)
	}
	if d := transfertest.QueueDepth(t, ctx, f.tgtAdmin, f.tgt); d != messages {
		t.Fatalf("the target holds %d of %d", d, messages)
	}
	if len(depths) < messages/chunk {
		t.Fatalf("saw %d staging moves, expected at least %d", len(depths), messages/chunk)
	}
	// A staging pass ends with a move that finds nothing (no hook runs for it), and a run stages
	// in two passes at most (messages without an expiry, then those with one).
	if n := depthReads.Load(); n > int64(len(depths))+2 {
		t.Fatalf("staging read the staging queue's depth %d times for %d staging moves: it should read it once per move", n, len(depths))
	}
	limit := int64((stageAheadChunks + 1) * chunk)
	for i, d := range depths {
		if d >= limit {
			t.Fatalf("after staging move %d the staging queue held %d messages: more than %d chunks of %d ahead of the relay (depths %v)",
				i+1, d, stageAheadChunks, chunk, depths)
		}
	}
}
