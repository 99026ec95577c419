package ledger

import (
	"context"
	"time"
)

// What the external tests name of the package's own event kinds, schema version and
// retention and lease take-over.
const (
	EventAbandoned  = eventAbandoned
	EventCompleted  = eventCompleted
	EventLeaseLost  = eventLeaseLost
	EventLeaseTaken = eventLeaseTaken
	EventRelayed    = eventRelayed
	EventStaged     = eventStaged
)

// SchemaVersion is schemaVersion.
func SchemaVersion() int { return schemaVersion() }

// PurgeRunsBefore is purgeRunsBefore.
func (l *Ledger) PurgeRunsBefore(ctx context.Context, t time.Time) (int64, error) {
	return l.purgeRunsBefore(ctx, t)
}

// TakeOverLease is takeOverLease.
func (l *Ledger) TakeOverLease(ctx context.Context, runID, holder, gone string, ttl time.Duration) (Lease, error) {
	return l.takeOverLease(ctx, runID, holder, gone, ttl)
}
