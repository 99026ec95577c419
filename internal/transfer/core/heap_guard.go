package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// minHeapPausePoll bounds how often a paused relay reads the target, whatever the interval.
const minHeapPausePoll = 100 * time.Millisecond

// heapPauses reports whether the relay pauses: the target address pages, where every message
// sent with a duplicate id keeps a page-transaction record on the target's heap until it is
// consumed, and the heap is at or above percent of its max. A guard that is off (percent < 0) or
// a heap without a known max never pauses.
func heapPauses(paging bool, heap artemis.HeapUsage, percent int) bool {
	return percent >= 0 && paging && heap.Max > 0 && heap.Used*100 >= int64(percent)*heap.Max
}

// heapWaiting is the wait the relay reports while the heap guard pauses it.
func heapWaiting(broker, address, queue string, heap artemis.HeapUsage, percent int) string {
	return fmt.Sprintf("waiting: target address %s on broker %q pages and the broker's heap is %d%% used "+
		"(%d of %d MiB; the relay pauses from %d%%): each message sent while the address pages keeps a paging "+
		"record on its heap until it is consumed. The run goes on once consumers drain queue %s or the heap is "+
		"below %d%% again; a larger -Xmx, or a max-size-bytes for the address large enough not to page, avoid the wait",
		address, broker, heap.Percent(), heap.Used>>20, heap.Max>>20, percent, queue, percent)
}

// WaitForTargetHeap pauses the run while the target address pages and the target broker's heap
// is at or above Options.HeapPausePercent of its max, reporting the wait; it reads the target at
// most once per Options.HeapCheckInterval (and, while paused, once per 100 ms at most). Only a PAGE address pages. What the guard cannot read
// (a role without get* on java.lang, a passing management error) lets the run go on: the target
// itself still refuses what it cannot take.
func (r *Worker) WaitForTargetHeap(ctx context.Context) error {
	percent, interval := r.Opts.HeapPausePercent, r.Opts.HeapCheckInterval
	if percent < 0 || interval <= 0 || !strings.EqualFold(r.targetPolicy, "PAGE") || time.Now().Before(r.heapCheckAfter) {
		return nil
	}
	paused := false
	for attempt := 0; attempt < 1_000_000; attempt++ {
		r.heapCheckAfter = time.Now().Add(interval)
		heap, paging, err := r.targetHeap(ctx)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || !heapPauses(paging, heap, percent) {
			if paused {
				r.Progress.SetWaiting("")
			}
			if errors.Is(err, artemis.ErrForbidden) {
				r.Opts.HeapPausePercent = -1 // said once; the user's role will not change mid-run
				r.Progress.Note(fmt.Sprintf("the target's heap cannot be read, so the relay does not pause for it: %v", err))
			}
			return nil
		}
		paused = true
		r.Progress.SetWaiting(heapWaiting(r.Target.Name(), r.Run.Spec.Target.Address, r.Run.Spec.Target.Queue, heap, percent))
		if r.Hooks.HeapPaused != nil {
			r.Hooks.HeapPaused()
		}
		if err := Sleep(ctx, max(interval, minHeapPausePoll)); err != nil {
			return err
		}
	}
	return fmt.Errorf("run %s: the target's heap stayed full", r.Run.RunID)
}

// targetHeap reads the target's heap and whether the target address pages.
func (r *Worker) targetHeap(ctx context.Context) (artemis.HeapUsage, bool, error) {
	usage, err := r.Target.AddressUsage(ctx, r.Run.Spec.Target.Address)
	if err != nil || !usage.Paging {
		return artemis.HeapUsage{}, false, err
	}
	heap, err := r.Target.Heap(ctx)
	return heap, true, err
}
