package copying

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// pagingTarget makes the target queue's address page from its first 64 KiB.
func pagingTarget(t *testing.T, ctx context.Context, admin *artemis.Client, queue string) {
	t.Helper()
	if err := admin.AddAddressSettings(ctx, queue, map[string]any{"addressFullMessagePolicy": "PAGE",
		"maxSizeBytes": int64(64 << 10), "pageSizeBytes": int64(32 << 10)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.RemoveAddressSettings(context.Background(), queue) })
}

// heapGuardOptions pause at 1% of the heap, which any broker's heap is above, so that the guard
// pauses whenever the target pages, and look before every batch: the test waits on the pause
// itself, not on how fast the heap fills.
func heapGuardOptions(progress func(core.Progress)) core.Options {
	return core.Options{BatchSize: 100, HeapPausePercent: 1, HeapCheckInterval: time.Nanosecond, Progress: progress}
}

func TestCopy_PausesWhileThePagingTargetsHeapIsFullAndFinishesOnceConsumersDrainIt(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n = 3000
	f := newCopyFixture(t, ctx, "copyheap", n, false)
	pagingTarget(t, ctx, f.tgtAdmin, f.tgt)
	oomBefore := f.env.CountInLog(t, "target", "OutOfMemoryError")
	var mu sync.Mutex
	var waits []string
	progress := func(p core.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(p.Waiting, "heap") && (len(waits) == 0 || waits[len(waits)-1] != p.Waiting) {
			waits = append(waits, p.Waiting)
		}
	}

	// The run's time runs out while it is paused: it stops resumable.
	stopCtx, stop := context.WithCancel(ctx)
	first := f.engine(t, heapGuardOptions(progress))
	pauses := 0
	first.setup.Hooks.HeapPaused = func() {
		if pauses++; pauses == 1 {
			// Paused: the target is alive and well, and holds only part of the selection.
			if _, err := f.tgtAdmin.Heap(ctx); err != nil {
				t.Errorf("the target's heap at the pause: %v", err)
			}
			if d := transfertest.QueueDepth(t, ctx, f.tgtAdmin, f.tgt); d <= 0 || d >= n {
				t.Errorf("the target holds %d messages at the pause, want some of the %d", d, n)
			}
			stop()
		}
	}
	stopped, err := first.Copy(stopCtx, f.spec)
	if !errors.Is(err, core.ErrInterrupted) || !strings.Contains(err.Error(), "running the same copy again resumes it") {
		t.Fatalf("the copy stopped while paused: %v, want ErrInterrupted saying to run it again", err)
	}
	if pauses == 0 {
		t.Fatal("the relay never paused for the paging target's heap")
	}
	mu.Lock()
	if len(waits) == 0 || !strings.Contains(waits[0], "pages and the broker's heap is") ||
		!strings.Contains(waits[0], "consumers drain queue "+f.tgt) || !strings.Contains(waits[0], "-Xmx") {
		t.Errorf("the waits reported %q, want the heap figures and what to do", waits)
	}
	mu.Unlock()
	t.Logf("stopped while paused after %d copied: %v", stopped.Relayed, err)

	// Run again with a consumer draining the target: the copy resumes, pausing whenever the
	// target pages again, and finishes.
	drainCtx, stopDrain := context.WithCancel(ctx)
	drained := make(chan []*amqp.Message, 1)
	go func() { drained <- drain(drainCtx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)) }()
	res, err := f.engine(t, heapGuardOptions(progress)).Copy(ctx, f.spec)
	stopDrain()
	got := <-drained
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID != stopped.RunID || res.RelayedTotal != n {
		t.Errorf("the second apply: run %s with %d copied in all, want run %s resumed with %d", res.RunID, res.RelayedTotal, stopped.RunID, n)
	}
	got = append(got, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt))...)
	transfertest.CheckSameSet(t, f.want, got)
	if c := f.env.CountInLog(t, "target", "OutOfMemoryError"); c != oomBefore {
		t.Errorf("the target logged OutOfMemoryError %d times during the copy", c-oomBefore)
	}
	checkCopyRun(t, ctx, f.ledger, res.RunID, n)
}

// drain consumes and accepts what arrives on fqqn until ctx ends.
func drain(ctx context.Context, c *artemis.Client, fqqn string) []*amqp.Message {
	conn, err := c.Connect(ctx)
	if err != nil {
		return nil
	}
	defer conn.Close()
	r, err := conn.NewReceiver(ctx, fqqn, artemis.ReceiverOptions{Credit: 100})
	if err != nil {
		return nil
	}
	var out []*amqp.Message
	for i := 0; i < 1_000_000; i++ {
		msg, err := r.Receive(ctx)
		if err != nil {
			break
		}
		if err := r.Accept(context.WithoutCancel(ctx), msg); err != nil {
			break
		}
		out = append(out, msg)
	}
	_ = r.Close(context.WithoutCancel(ctx))
	return out
}
