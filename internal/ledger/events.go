package ledger

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// EventKind is what an event records.
type EventKind string

// The kinds of events. CreateRun, SetStatus and the lease calls append theirs themselves.
// staged and relayed are for AppendEvent with a batch's counts in the detail; the engine keeps
// its counts on the run (AddCounters) and appends neither today.
const (
	eventCreated     EventKind = "created"
	eventStaged      EventKind = "staged"
	eventRelayed     EventKind = "relayed"
	eventInterrupted EventKind = "interrupted"
	eventResumed     EventKind = "resumed"
	eventCompleted   EventKind = "completed"
	eventReturned    EventKind = "returned"
	eventFailed      EventKind = "failed"
	eventLeaseTaken  EventKind = "lease-taken"
	eventLeaseLost   EventKind = "lease-lost"
	eventAbandoned   EventKind = "abandoned"
)

// EventKindNames are the names of every event kind, in the order above: the list
// artemis_transfer_runs documents is tested against it.
func EventKindNames() []string {
	return []string{string(eventCreated), string(eventStaged), string(eventRelayed), string(eventInterrupted),
		string(eventResumed), string(eventCompleted), string(eventReturned), string(eventFailed),
		string(eventLeaseTaken), string(eventLeaseLost), string(eventAbandoned)}
}

// Event is one entry of a run's append-only log.
type Event struct {
	ID     int64 // increases in the order events were appended
	RunID  string
	At     time.Time
	Kind   EventKind
	Detail map[string]any
}

// AppendEvent adds an event to a run's log. detail (may be nil) is stored as JSON: counts,
// ids and reasons, never message bodies or secrets.
func (l *Ledger) AppendEvent(ctx context.Context, runID string, kind EventKind, detail map[string]any) error {
	if detail == nil {
		detail = map[string]any{}
	}
	_, err := l.pool.Exec(ctx, `INSERT INTO `+Schema+`.events (run_id, kind, detail) VALUES ($1, $2, $3)`,
		runID, string(kind), detail)
	return l.wrapErr("appending a "+string(kind)+" event to run "+runID+" in the transfer ledger", err)
}

// Events reads a run's events in the order they were appended, those with an id above
// afterID, at most limit of them (zero means 1,000): page with the last id read.
func (l *Ledger) Events(ctx context.Context, runID string, afterID int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := l.pool.Query(ctx, `SELECT id, run_id, at, kind, detail FROM `+Schema+`.events
		WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3`, runID, afterID, limit)
	if err != nil {
		return nil, l.wrapErr("reading the events of run "+runID+" from the transfer ledger", err)
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Event, error) {
		var e Event
		err := row.Scan(&e.ID, &e.RunID, &e.At, &e.Kind, &e.Detail)
		return e, err
	})
	if err != nil {
		return nil, l.wrapErr("reading the events of run "+runID+" from the transfer ledger", err)
	}
	return events, nil
}
