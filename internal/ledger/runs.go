package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Status is where a run stands.
type Status string

// The statuses of a run.
const (
	StatusRunning     Status = "running"     // being staged and relayed
	StatusInterrupted Status = "interrupted" // stopped before the end; resumable
	StatusCompleted   Status = "completed"   // every selected message is on the target
	StatusReturned    Status = "returned"    // its staged messages went back to the source
	StatusFailed      Status = "failed"      // stopped by an error a resume will not fix by itself
	StatusAbandoned   Status = "abandoned"   // a copy ended without finishing; what it copied stays on the target
)

// StatusNames are the names of every status, in the order above: the lists the docs give
// (artemis_transfer_runs, the ledger guide) are tested against it.
func StatusNames() []string {
	return []string{string(StatusRunning), string(StatusInterrupted), string(StatusCompleted),
		string(StatusReturned), string(StatusFailed), string(StatusAbandoned)}
}

// Mode is what a run does to its source.
type Mode string

// The modes of a run.
const (
	ModeMove Mode = "move" // the selection leaves the source
	ModeCopy Mode = "copy" // the source is left untouched
)

// ModeNames are the names of every mode, in the order above.
func ModeNames() []string { return []string{string(ModeMove), string(ModeCopy)} }

// Counters are the message counts of a run. AddCounters adds a delta to them.
type Counters struct {
	Staged   int64 // moved broker-side into the run's staging queue
	Relayed  int64 // confirmed by the target
	Resent   int64 // sent again after an interruption (the target dropped them as duplicates)
	Returned int64 // put back on the source queue
}

// Creator says who started a run, as far as the provider knows.
type Creator struct {
	User      string // OS user of the process that created the run
	Host      string // host name of that machine
	Workspace string // Terraform workspace, "" when unknown
}

// Lease is a run's fence: only its holder works on the run until it expires.
type Lease struct {
	Holder      string
	TakenAt     time.Time
	HeartbeatAt time.Time
	ExpiresAt   time.Time
	// HolderGone is true when the holder's process has ended (its ledger session is gone), as
	// read with the run: the next TakeLease takes the run over at once, before ExpiresAt.
	HolderGone bool
}

// Run is one run of a transfer.
type Run struct {
	ID string
	// Fingerprint is the transfer's spec key: the same transfer asked again has the same one.
	Fingerprint  string
	Mode         Mode
	SourceBroker string
	SourceQueue  string
	TargetBroker string
	TargetQueue  string
	// Filter is the selection's filter ("" for a whole queue or an id selection);
	// SelectedIDs is how many broker message ids an id selection named (0 otherwise).
	Filter      string
	SelectedIDs int
	// T0 freezes a filter or whole-queue selection: messages produced after it are not part of it.
	T0        time.Time
	Status    Status
	Counters  Counters
	CreatedBy Creator
	// SourceNodeID and TargetNodeID are the broker nodes the run is pinned to ("" for any): a
	// copy, which keeps no manifest on the source broker, finds them here when it resumes.
	SourceNodeID string
	TargetNodeID string
	// CopyIdentity is the version of the message identity a copy records its copied messages
	// by; a run keeps it for life. Runs recorded before versions read 1; a move's is 0.
	CopyIdentity int
	// CreatedAt and UpdatedAt are set by the database; CreateRun ignores them.
	CreatedAt time.Time
	UpdatedAt time.Time
	// Lease is nil when nobody holds the run.
	Lease *Lease
}

const runColumns = `run_id, fingerprint, mode, source_broker, source_queue, target_broker, target_queue,
	selection_filter, selection_ids, t0, status, staged, relayed, resent, returned,
	created_by_user, created_by_host, terraform_workspace, created_at, updated_at,
	lease_holder, lease_taken_at, lease_heartbeat_at, lease_expires_at, source_node_id, target_node_id, copy_identity, ` + holderGoneSQL

func scanRun(row pgx.Row) (Run, error) {
	var r Run
	var holder *string
	var taken, heartbeat, expires *time.Time
	var gone bool
	err := row.Scan(&r.ID, &r.Fingerprint, &r.Mode, &r.SourceBroker, &r.SourceQueue, &r.TargetBroker, &r.TargetQueue,
		&r.Filter, &r.SelectedIDs, &r.T0, &r.Status,
		&r.Counters.Staged, &r.Counters.Relayed, &r.Counters.Resent, &r.Counters.Returned,
		&r.CreatedBy.User, &r.CreatedBy.Host, &r.CreatedBy.Workspace, &r.CreatedAt, &r.UpdatedAt,
		&holder, &taken, &heartbeat, &expires, &r.SourceNodeID, &r.TargetNodeID, &r.CopyIdentity, &gone)
	if err != nil {
		return Run{}, err
	}
	if holder != nil {
		r.Lease = &Lease{Holder: *holder, TakenAt: deref(taken), HeartbeatAt: deref(heartbeat), ExpiresAt: deref(expires), HolderGone: gone}
	}
	return r, nil
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// CreateRun records a new run, with its "created" event, in one statement; do it before
// anything moves. Status defaults to running. The run's counters and lease start empty
// whatever r holds. A run id already recorded gives ErrRunExists: resume that run instead.
// A copy claims its transfer (its fingerprint) while it is unfinished: a copy of a transfer
// that has an unfinished copy already, created by another process a moment before, gives an
// *UnfinishedCopyError, decided by a unique index so that two processes cannot both pass.
func (l *Ledger) CreateRun(ctx context.Context, r Run) error {
	if r.ID == "" || r.Fingerprint == "" || r.T0.IsZero() {
		return fmt.Errorf("recording run %q: a run needs an id, a fingerprint and a t0", r.ID)
	}
	if r.Status == "" {
		r.Status = StatusRunning
	}
	_, err := l.pool.Exec(ctx, `WITH run AS (
		INSERT INTO `+Schema+`.runs (run_id, fingerprint, mode, source_broker, source_queue, target_broker, target_queue,
			selection_filter, selection_ids, t0, status, created_by_user, created_by_host, terraform_workspace,
			source_node_id, target_node_id, claims_transfer, copy_identity)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $3::text = 'copy', $17)
		RETURNING run_id)
	INSERT INTO `+Schema+`.events (run_id, kind, detail)
	SELECT run_id, 'created', jsonb_build_object('mode', $3::text, 'by_user', $12::text, 'by_host', $13::text, 'workspace', $14::text)
	FROM run`,
		r.ID, r.Fingerprint, string(r.Mode), r.SourceBroker, r.SourceQueue, r.TargetBroker, r.TargetQueue,
		r.Filter, r.SelectedIDs, r.T0, string(r.Status), r.CreatedBy.User, r.CreatedBy.Host, r.CreatedBy.Workspace,
		r.SourceNodeID, r.TargetNodeID, r.CopyIdentity)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation && pgErr.ConstraintName == "runs_pkey" {
		return fmt.Errorf("recording run %s: %w", r.ID, ErrRunExists)
	}
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation && pgErr.ConstraintName == unfinishedCopyIndex {
		return fmt.Errorf("recording copy run %s: %w", r.ID, l.unfinishedCopyOf(ctx, r.Fingerprint))
	}
	return l.wrapErr("recording run "+r.ID+" in the transfer ledger", err)
}

// unfinishedCopyOf is the *UnfinishedCopyError for a copy of fingerprint, naming the copy
// that claims the transfer and its lease holder as far as the ledger answers.
func (l *Ledger) unfinishedCopyOf(ctx context.Context, fingerprint string) *UnfinishedCopyError {
	e := &UnfinishedCopyError{Fingerprint: fingerprint}
	var holder *string
	err := l.pool.QueryRow(ctx, `SELECT run_id, CASE WHEN lease_expires_at > now() THEN lease_holder END
		FROM `+Schema+`.runs WHERE fingerprint = $1 AND mode = 'copy' AND claims_transfer
			AND status IN ('running', 'interrupted', 'failed')`, fingerprint).Scan(&e.RunID, &holder)
	if err == nil && holder != nil {
		e.Holder = *holder
	}
	return e
}

// GetRun reads one run; ErrRunNotFound when the ledger has none with that id.
func (l *Ledger) GetRun(ctx context.Context, runID string) (Run, error) {
	r, err := scanRun(l.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM `+Schema+`.runs WHERE run_id = $1`, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, fmt.Errorf("reading run %s: %w", runID, ErrRunNotFound)
	}
	if err != nil {
		return Run{}, l.wrapErr("reading run "+runID+" from the transfer ledger", err)
	}
	return r, nil
}

// RunFilter selects runs for ListRuns. Empty fields match every run.
type RunFilter struct {
	SourceBroker string
	SourceQueue  string
	TargetBroker string
	TargetQueue  string
	// Statuses matches runs in any of these statuses.
	Statuses []Status
	// Limit caps how many runs are returned, newest first. Zero means 100; at most 10,000.
	Limit int
}

// ListRuns reads the runs that match f, newest first.
func (l *Ledger) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 10_000)
	var where []string
	var args []any
	for _, eq := range []struct{ column, value string }{
		{"source_broker", f.SourceBroker}, {"source_queue", f.SourceQueue},
		{"target_broker", f.TargetBroker}, {"target_queue", f.TargetQueue},
	} {
		if eq.value != "" {
			args = append(args, eq.value)
			where = append(where, fmt.Sprintf("%s = $%d", eq.column, len(args)))
		}
	}
	if len(f.Statuses) > 0 {
		statuses := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			statuses[i] = string(s)
		}
		args = append(args, statuses)
		where = append(where, fmt.Sprintf("status = ANY($%d)", len(args)))
	}
	q := `SELECT ` + runColumns + ` FROM ` + Schema + `.runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	q += fmt.Sprintf(` ORDER BY created_at DESC, run_key DESC LIMIT $%d`, len(args))
	rows, err := l.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, l.wrapErr("listing runs in the transfer ledger", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Run, error) { return scanRun(row) })
	if err != nil {
		return nil, l.wrapErr("listing runs in the transfer ledger", err)
	}
	return runs, nil
}

// AddCounters adds delta to a run's counters in one statement; call it once per batch.
// With a holder, the write is fenced: it is refused with ErrLeaseLost unless holder still
// holds the run's lease, so a process that lost its run learns it at its next batch. An empty
// holder writes unfenced (for runs worked on without a lease).
func (l *Ledger) AddCounters(ctx context.Context, runID, holder string, delta Counters) error {
	return l.AddCountersOnce(ctx, runID, holder, 0, delta)
}

// AddCountersOnce is AddCounters that adds delta at most once for holder's write number seq:
// a write retried after a timeout or a reset that had in fact committed carries the same seq
// and adds nothing, so a retry cannot count twice. A holder numbers its writes of a run from 1
// up; seq 0 adds unconditionally, as AddCounters.
func (l *Ledger) AddCountersOnce(ctx context.Context, runID, holder string, seq int64, delta Counters) error {
	if seq < 0 {
		return fmt.Errorf("adding counters to run %s: write number %d is negative", runID, seq)
	}
	var current *string
	var found bool
	err := l.pool.QueryRow(ctx, `WITH run AS (
		SELECT run_id, lease_holder, counted_by, counted_seq FROM `+Schema+`.runs WHERE run_id = $1 FOR UPDATE
	), added AS (
		UPDATE `+Schema+`.runs r SET staged = r.staged + $3, relayed = r.relayed + $4, resent = r.resent + $5,
			returned = r.returned + $6, updated_at = now(),
			counted_by = CASE WHEN $7 > 0 THEN $2 ELSE r.counted_by END,
			counted_seq = CASE WHEN $7 > 0 THEN $7 ELSE r.counted_seq END
		FROM run WHERE r.run_id = run.run_id AND ($2 = '' OR run.lease_holder = $2)
			AND ($7 = 0 OR run.counted_by IS DISTINCT FROM $2 OR $7 > run.counted_seq)
		RETURNING r.run_id)
	SELECT true, run.lease_holder FROM run`,
		runID, holder, delta.Staged, delta.Relayed, delta.Resent, delta.Returned, seq).Scan(&found, &current)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("adding counters to run %s: %w", runID, ErrRunNotFound)
	}
	if err != nil {
		return l.wrapErr("adding counters to run "+runID+" in the transfer ledger", err)
	}
	if holder != "" && (current == nil || *current != holder) {
		return fmt.Errorf("adding counters to run %s as %s: %w (now held by %s)", runID, holder, ErrLeaseLost, describeHolder(current))
	}
	return nil
}

// SetStatus moves a run to status and appends the matching event in one statement:
// running appends "resumed", the others an event of their own name. detail (may be nil)
// goes into the event, e.g. {"why": "..."} for interrupted or {"by": "..."} for resumed.
// With a holder the write is fenced like AddCounters: it changes nothing and fails with
// ErrLeaseLost unless holder holds the run's lease, so a process paused past its lease cannot
// mark failed a run that another process took over and finished. An empty holder writes
// unfenced (a run worked on without a lease).
func (l *Ledger) SetStatus(ctx context.Context, runID, holder string, status Status, detail map[string]any) error {
	kind := EventKind(status)
	if status == StatusRunning {
		kind = eventResumed
	}
	if detail == nil {
		detail = map[string]any{}
	}
	var current *string
	var set bool
	err := l.pool.QueryRow(ctx, `WITH run AS (
		SELECT run_id, lease_holder FROM `+Schema+`.runs WHERE run_id = $1 FOR UPDATE
	), set AS (
		UPDATE `+Schema+`.runs r SET status = $2, updated_at = now()
		FROM run WHERE r.run_id = run.run_id AND ($5 = '' OR run.lease_holder = $5)
		RETURNING r.run_id
	), logged AS (
		INSERT INTO `+Schema+`.events (run_id, kind, detail) SELECT run_id, $3, $4 FROM set)
	SELECT run.lease_holder, EXISTS (SELECT 1 FROM set) FROM run`,
		runID, string(status), string(kind), detail, holder).Scan(&current, &set)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("setting run %s to %s: %w", runID, status, ErrRunNotFound)
	}
	if err != nil {
		return l.wrapErr(fmt.Sprintf("setting run %s to %s in the transfer ledger", runID, status), err)
	}
	if !set {
		return fmt.Errorf("setting run %s to %s as %s: %w (now held by %s)", runID, status, holder, ErrLeaseLost, describeHolder(current))
	}
	return nil
}

// purgeRunsBefore deletes the completed, returned and abandoned runs last updated before t, with their
// events and copied ids, and says how many runs went. Runs that may still be resumed
// (running, interrupted, failed) are kept whatever their age: their staging queues may still
// hold messages, and the ledger is what explains them.
func (l *Ledger) purgeRunsBefore(ctx context.Context, t time.Time) (int64, error) {
	tag, err := l.pool.Exec(ctx, `DELETE FROM `+Schema+`.runs WHERE status IN ('completed', 'returned', 'abandoned') AND updated_at < $1`, t)
	if err != nil {
		return 0, l.wrapErr("purging finished runs from the transfer ledger", err)
	}
	return tag.RowsAffected(), nil
}

func describeHolder(h *string) string {
	if h == nil {
		return "nobody"
	}
	return *h
}
