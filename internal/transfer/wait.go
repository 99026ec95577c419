package transfer

import (
	"context"
	"fmt"
	"time"
)

func backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(attempt, 5)
	return min(d, 5*time.Second)
}

// waitForCapacity holds the run while the target address cannot take more: full with policy
// BLOCK or FAIL, or the target broker's global memory full. PAGE and DROP never wait (a DROP
// target is refused before a run starts).
func (r *runner) waitForCapacity(ctx context.Context) error {
	if r.targetPolicy != "BLOCK" && r.targetPolicy != "FAIL" {
		return nil
	}
	for attempt := 0; ; attempt++ {
		usage, err := r.target.AddressUsage(ctx, r.m.Spec.Target.Address)
		if err != nil {
			return fmt.Errorf("run %s: checking the target's capacity: %w", r.m.RunID, err)
		}
		global, err := r.target.GlobalMemoryPercent(ctx)
		if err != nil {
			return fmt.Errorf("run %s: checking the target's capacity: %w", r.m.RunID, err)
		}
		if usage.LimitPercent < 100 && global < 100 {
			if attempt > 0 {
				r.progress.setWaiting("")
			}
			return nil
		}
		r.progress.setWaiting(fmt.Sprintf("waiting: target address %s is full (%s policy, %d%% of its limit, broker memory %d%%)",
			r.m.Spec.Target.Address, r.targetPolicy, usage.LimitPercent, global))
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
