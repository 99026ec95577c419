package core

import (
	"context"
	"fmt"
	"time"
)

func Backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(attempt, 5)
	return min(d, 5*time.Second)
}

// WaitForCapacity holds the run while the target address cannot take more: full with policy
// BLOCK or FAIL, or the target broker's global memory full. PAGE and DROP never wait (a DROP
// target is refused before a run starts). A PAGE target waits while its heap is nearly full
// (WaitForTargetHeap).
func (r *Worker) WaitForCapacity(ctx context.Context) error {
	if err := r.WaitForTargetHeap(ctx); err != nil {
		return err
	}
	if r.targetPolicy != "BLOCK" && r.targetPolicy != "FAIL" {
		return nil
	}
	for attempt := 0; ; attempt++ {
		usage, err := r.Target.AddressUsage(ctx, r.Run.Spec.Target.Address)
		if err != nil {
			return fmt.Errorf("run %s: checking the target's capacity: %w", r.Run.RunID, err)
		}
		global, err := r.Target.GlobalMemoryPercent(ctx)
		if err != nil {
			return fmt.Errorf("run %s: checking the target's capacity: %w", r.Run.RunID, err)
		}
		if usage.LimitPercent < 100 && global < 100 {
			if attempt > 0 {
				r.Progress.SetWaiting("")
			}
			return nil
		}
		r.Progress.SetWaiting(fmt.Sprintf("waiting: target address %s is full (%s policy, %d%% of its limit, broker memory %d%%)",
			r.Run.Spec.Target.Address, r.targetPolicy, usage.LimitPercent, global))
		if err := Sleep(ctx, Backoff(attempt)); err != nil {
			return err
		}
	}
}

func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
