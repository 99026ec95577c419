package faults

// The wait an operator makes when a copy's apply is refused because another process's lease
// still fences its run.

import (
	"context"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
)

// maxLeaseWait bounds the wait for a lease to lapse: the engine's lease lasts 90 s, so a
// longer wait means the time was misread, and the next apply says so.
const maxLeaseWait = 3 * time.Minute

// leaseReadTimeout bounds reading the iteration's runs from the ledger.
const leaseReadTimeout = 30 * time.Second

// leaseLapse is when the lease that will refuse the iteration's next apply lapses: the time a
// refusal (ledger.LeaseHeldError) names, and the moment an operator who read it would apply
// again. It reads the ledger the copy records in rather than terraform's English; a move has
// no ledger and no lease, and a ledger that cannot be read gives no wait.
func (h *runner) leaseLapse(ctx context.Context, it *Iteration) (time.Time, bool) {
	if !it.Kind.Copies() || h.ledger == nil {
		return time.Time{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, leaseReadTimeout)
	defer cancel()
	l, err := ledger.Open(ctx, h.ledger.DSN)
	if err != nil {
		h.logf("reading the copy's lease: %v", err)
		return time.Time{}, false
	}
	defer l.Close()
	runs, err := l.ListRuns(ctx, ledger.RunFilter{SourceQueue: it.SourceQueue, TargetQueue: it.TargetQueue})
	if err != nil {
		h.logf("reading the copy's lease: %v", err)
		return time.Time{}, false
	}
	// The ledger tells, with each run, whether its lease holder's process has ended.
	gone := map[string]bool{}
	for _, r := range runs {
		if r.Lease != nil && r.Lease.HolderGone {
			gone[r.Lease.Holder] = true
		}
	}
	return heldUntil(runs, time.Now(), func(holder string) bool { return gone[holder] })
}

// heldUntil is when the latest lease among runs that refuses a new holder lapses: one that
// has not expired by now and whose holder is not gone (the engine takes a gone holder's lease
// over at once, and refuses only a live one, as ledger.LeaseHeldError, until it lapses).
func heldUntil(runs []ledger.Run, now time.Time, gone func(holder string) bool) (time.Time, bool) {
	var until time.Time
	for _, r := range runs {
		if l := r.Lease; l != nil && l.ExpiresAt.After(now) && !gone(l.Holder) && l.ExpiresAt.After(until) {
			until = l.ExpiresAt
		}
	}
	return until, !until.IsZero()
}
