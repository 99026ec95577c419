//go:build heapdemo

package copying

// The heap guard on a target whose heap is really small (scripts/heap-guard-demo.sh starts
// brokers with a heap of a few hundred MiB and runs this alone): a copy into a paging address
// fills the target's heap with page-transaction records until the guard pauses it at its
// default threshold, before the broker runs out; a consumer then drains the target and the copy
// finishes, exact. Built only with -tags heapdemo: on make test's 1 GiB brokers it would need
// millions of messages.

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// recordBytes is about what the target's heap keeps per message sent with a duplicate id while
// its address pages, as measured on 2.40 after a full collection (the preflight estimates three
// times as much).
const recordBytes = 180

func TestHeapDemo_TheGuardPausesACopyBeforeASmallHeapRunsOutAndTheCopyFinishesOnceConsumersMakeRoom(t *testing.T) {
	ctx := transfertest.Ctx(t, 40*time.Minute)
	f := newCopyFixture(t, ctx, "heapdemo", 0, false)
	heap, err := f.tgtAdmin.Heap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if heap.Max <= 0 || heap.Max > 768<<20 {
		t.Fatalf("the target's heap max is %d MiB: point this test at brokers with a small heap (scripts/heap-guard-demo.sh)", heap.Max>>20)
	}
	// Enough records to take the heap from what it holds now past 95%.
	n := int((heap.Max*95/100 - heap.Used) / recordBytes * 5 / 4)
	if s := os.Getenv("HEAPDEMO_MESSAGES"); s != "" {
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("target heap: max %d MiB, %d MiB used; copying %d messages of 200-byte bodies into a paging address", heap.Max>>20, heap.Used>>20, n)
	pagingTarget(t, ctx, f.tgtAdmin, f.tgt)
	produceStart := time.Now()
	f.want = transfertest.ProduceNumbered(t, ctx, f.srcAdmin, f.src, "heapdemo", n)
	t.Logf("produced in %s", time.Since(produceStart).Round(time.Second))
	oomBefore := f.env.CountInLog(t, "target", "OutOfMemoryError")
	// A consumer too slow to matter is attached from the start (it takes one message and holds
	// it): with none, the preflight refuses a selection whose records could fill the whole heap.
	slowConn, err := f.tgtAdmin.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slowConn.Close()
	slow, err := slowConn.NewReceiver(ctx, artemis.FQQN(f.tgt, f.tgt), artemis.ReceiverOptions{Credit: 1})
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var waits []string
	progress := func(p core.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(p.Waiting, "heap") && (len(waits) == 0 || waits[len(waits)-1] != p.Waiting) {
			waits = append(waits, p.Waiting)
		}
	}
	// The guard's defaults (pause at 90%), read every second rather than every 5 s.
	e := f.engine(t, core.Options{BatchSize: 500, HeapCheckInterval: time.Second, Progress: progress})
	drainCtx, stopDrain := context.WithCancel(ctx)
	defer stopDrain()
	drained := make(chan []*amqp.Message, 1)
	var once sync.Once
	pausedAt := make(chan artemis.HeapUsage, 1)
	e.setup.Hooks.HeapPaused = func() {
		once.Do(func() {
			h, err := f.tgtAdmin.Heap(ctx)
			if err != nil {
				t.Errorf("the target's heap at the pause: %v", err)
			}
			pausedAt <- h
			t.Logf("paused with %d of %d on the target, heap %d of %d MiB (%d%%); a consumer starts draining the target",
				transfertest.QueueDepth(t, ctx, f.tgtAdmin, f.tgt), n, h.Used>>20, h.Max>>20, h.Percent())
			// The slow consumer leaves (the message it held goes back to the queue) and a
			// fast one drains the target.
			_ = slow.Close(ctx)
			go func() { drained <- drain(drainCtx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)) }()
		})
	}
	start := time.Now()
	res, err := e.Copy(ctx, f.spec)
	if err != nil {
		t.Fatalf("the copy: %v", err)
	}
	t.Logf("copied %d in %s", res.RelayedTotal, time.Since(start).Round(time.Second))
	var h artemis.HeapUsage
	select {
	case h = <-pausedAt:
	default:
		t.Fatal("the copy never paused for the target's heap")
	}
	if h.Percent() < 80 {
		t.Errorf("the pause came at %d%% of the target's heap: the guard pauses from 90%% (Used drops as the JVM collects, but not this far)", h.Percent())
	}
	if c := f.env.CountInLog(t, "target", "OutOfMemoryError"); c != oomBefore {
		t.Fatalf("the target logged OutOfMemoryError %d times during the copy", c-oomBefore)
	}
	time.Sleep(2 * time.Second) // the consumer takes the last batch
	stopDrain()
	got := <-drained
	got = append(got, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt))...)
	transfertest.CheckSameSet(t, f.want, got)
	checkCopyRun(t, ctx, f.ledger, res.RunID, int64(n))
	mu.Lock()
	t.Logf("the waits it reported: %q", waits)
	mu.Unlock()
}
