package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// RecordCopied records that a copy has put these source message identities on the target, and
// adds the number of identities it had not recorded before to the run's relayed counter, so
// that counter is always exactly the number of distinct identities the run copied. One
// statement per call however many ids (pass a batch, not a message): the ids travel as one
// array parameter. Recording an id twice is harmless, so a batch repeated after an
// interruption, or a retried call, is fine: it returns how many ids were new.
//
// With a holder the write is fenced like AddCounters: it records nothing and fails with
// ErrLeaseLost unless holder holds the run's lease. An empty holder writes unfenced.
func (l *Ledger) RecordCopied(ctx context.Context, runID, holder string, ids []int64) (recorded int64, err error) {
	if len(ids) == 0 {
		return 0, nil
	}
	// An array parameter unnested server-side costs one round trip and no temporary table;
	// COPY into a temp table and INSERT ... SELECT would take four round trips per batch for
	// no gain at batch sizes the engine uses (thousands). The run row is locked first, so the
	// lease cannot change hands between the check and the insert.
	var current *string
	err = l.pool.QueryRow(ctx, `WITH run AS (
		SELECT run_key, run_id, lease_holder FROM `+Schema+`.runs WHERE run_id = $1 FOR UPDATE
	), inserted AS (
		INSERT INTO `+Schema+`.copied (run_key, source_id)
		SELECT run.run_key, id FROM run, unnest($2::bigint[]) AS id
		WHERE $3 = '' OR run.lease_holder = $3
		ON CONFLICT DO NOTHING
		RETURNING 1
	), counted AS (
		UPDATE `+Schema+`.runs r SET relayed = r.relayed + (SELECT count(*) FROM inserted), updated_at = now()
		FROM run WHERE r.run_id = run.run_id AND ($3 = '' OR run.lease_holder = $3)
	)
	SELECT run.lease_holder, (SELECT count(*) FROM inserted) FROM run`, runID, ids, holder).Scan(&current, &recorded)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("recording %d copied ids of run %s: %w", len(ids), runID, ErrRunNotFound)
	}
	if err != nil {
		return 0, l.wrapErr(fmt.Sprintf("recording %d copied ids of run %s in the transfer ledger", len(ids), runID), err)
	}
	if holder != "" && (current == nil || *current != holder) {
		return 0, fmt.Errorf("recording copied ids of run %s as %s: %w (now held by %s)", runID, holder, ErrLeaseLost, describeHolder(current))
	}
	return recorded, nil
}

// CopiedAmong says which of ids the run has already copied (RecordCopied), in one query:
// the map holds exactly those, so a resumed copy skips them. Memory is bounded by the batch
// the caller passes, never by the size of the run.
func (l *Ledger) CopiedAmong(ctx context.Context, runID string, ids []int64) (map[int64]bool, error) {
	done := map[int64]bool{}
	if len(ids) == 0 {
		return done, nil
	}
	rows, err := l.pool.Query(ctx, `SELECT c.source_id FROM `+Schema+`.copied c
		JOIN `+Schema+`.runs r ON r.run_key = c.run_key
		WHERE r.run_id = $1 AND c.source_id = ANY($2::bigint[])`, runID, ids)
	if err != nil {
		return nil, l.wrapErr(fmt.Sprintf("looking up %d copied ids of run %s in the transfer ledger", len(ids), runID), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, l.wrapErr("reading copied ids of run "+runID, err)
		}
		done[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrapErr(fmt.Sprintf("looking up %d copied ids of run %s in the transfer ledger", len(ids), runID), err)
	}
	return done, nil
}

// UnfinishedCopies reads the copy runs of a transfer (its fingerprint, the spec key) that are
// neither completed nor abandoned, oldest first: those a new apply of the same copy resumes.
// A copy that failed is unfinished too: what stopped it (a refusal by the target, say) may
// have been fixed, and its record of what was copied is what a resume needs.
func (l *Ledger) UnfinishedCopies(ctx context.Context, fingerprint string) ([]Run, error) {
	rows, err := l.pool.Query(ctx, `SELECT `+runColumns+` FROM `+Schema+`.runs
		WHERE fingerprint = $1 AND mode = 'copy' AND status NOT IN ('completed', 'abandoned', 'returned')
		ORDER BY t0, run_key`, fingerprint)
	if err != nil {
		return nil, l.wrapErr("looking up unfinished copies of "+fingerprint+" in the transfer ledger", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Run, error) { return scanRun(row) })
	if err != nil {
		return nil, l.wrapErr("looking up unfinished copies of "+fingerprint+" in the transfer ledger", err)
	}
	return runs, nil
}
