package ledger

import (
	"context"
	"fmt"
)

// RecordCopied records that a copy has put these source broker message ids on the target.
// One statement per call however many ids (pass a batch, not a message): the ids travel as
// one array parameter. Recording an id twice is harmless, so a batch repeated after an
// interruption, or a retried call, is fine.
func (l *Ledger) RecordCopied(ctx context.Context, runID string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	// An array parameter unnested server-side costs one round trip and no temporary table;
	// COPY into a temp table and INSERT ... SELECT would take four round trips per batch for
	// no gain at batch sizes the engine uses (thousands).
	var runs int
	err := l.pool.QueryRow(ctx, `WITH run AS (
		SELECT run_key FROM `+Schema+`.runs WHERE run_id = $1
	), recorded AS (
		INSERT INTO `+Schema+`.copied (run_key, source_id)
		SELECT run.run_key, id FROM run, unnest($2::bigint[]) AS id
		ON CONFLICT DO NOTHING
	)
	SELECT count(*) FROM run`, runID, ids).Scan(&runs)
	if err != nil {
		return l.wrapErr(fmt.Sprintf("recording %d copied ids of run %s in the transfer ledger", len(ids), runID), err)
	}
	if runs == 0 {
		return fmt.Errorf("recording %d copied ids of run %s: %w", len(ids), runID, ErrRunNotFound)
	}
	return nil
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
