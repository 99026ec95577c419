package move

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// recordStaging is the record kind of a run's staging moves (stagingRecord).
const recordStaging = "staging"

// stagingRecord says until when a staging move that a process of the run sent may still land.
// A staging move is fenced by the lease before it is sent, but the broker runs it whenever it
// gets its management lock (Artemis waits up to a minute for it), and runs it to the end even
// when the process that sent it is gone: it can land after that process lost the lease and
// another took it. A return that took over the run waits for such a move before it puts
// staging back on the source (outwaitLateMoves): a move landing after the return began would
// carry returned messages into staging again, and one landing between the return's last check
// of staging and its removal would lose them.
type stagingRecord struct {
	// LandsBy is the latest instant a staging move sent by a process of the run can land;
	// zero when none may be outstanding.
	LandsBy time.Time `json:"lands_by,omitzero"`
}

// stagingRecordEvery is how often a staging pass writes its record again while it moves: one
// durable send per stagingRecordEvery instead of one per chunk, at the cost of a return waiting
// that much longer after the last record.
const stagingRecordEvery = 10 * time.Second

// stagingMove is one move from the source queue into staging (moveUncut), recorded first: the
// staging record says for how long a move this process sends may land (markStaging), and a
// move whose answer never came leaves the record saying so (stagingUnsettled).
func (r *runner) stagingMove(ctx context.Context, req artemis.MoveRequest) (int, error) {
	if err := r.markStaging(ctx); err != nil {
		return 0, err
	}
	n, err := moveUncut(ctx, r.Source, r.lease, req)
	if err != nil && (artemis.IsConnectionLost(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		r.stagingUnsettled = true
	}
	return n, err
}

// markStaging writes the staging record before a staging move when the last one this process
// wrote is older than stagingRecordEvery, or it wrote none.
func (r *runner) markStaging(ctx context.Context) error {
	if !r.stagingMarkedAt.IsZero() && time.Since(r.stagingMarkedAt) < stagingRecordEvery {
		return nil
	}
	now := time.Now()
	landsBy := now.Add(stagingRecordEvery + r.Graces.LateMove)
	if r.lateMovesBy.After(landsBy) {
		landsBy = r.lateMovesBy
	}
	if err := r.writeRecord(ctx, recordStaging, stagingRecord{LandsBy: landsBy}); err != nil {
		return err
	}
	r.stagingMarkedAt = now
	return nil
}

// settleStaging records, once this process's staging pass has ended, that no move it sent is
// outstanding: each had its answer. The record keeps what an earlier process's record said,
// which may still be ahead. It writes nothing when this process recorded no move, or when a
// move's answer never came (its record stands).
func (r *runner) settleStaging(ctx context.Context) {
	if r.stagingMarkedAt.IsZero() || r.stagingUnsettled {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stagingRecordEvery)
	defer cancel()
	rec := stagingRecord{}
	if time.Now().Before(r.lateMovesBy) {
		rec.LandsBy = r.lateMovesBy
	}
	if err := r.writeRecord(wctx, recordStaging, rec); err != nil {
		// Only costs a later return a wait for moves that never come.
		r.Progress.Note("staging: recording that no staging move is outstanding: " + err.Error())
		return
	}
	r.stagingMarkedAt = time.Time{}
}

// outwaitLateMoves waits, before a return changes staging, until a staging move that an earlier
// process of the run may have sent can have landed (rec.LandsBy), and for no longer than
// stagingRecordEvery and core.Graces.LateMove from now: the instant is the writer's clock, and
// the clocks of the two processes are assumed to agree within seconds.
func (r *runner) outwaitLateMoves(ctx context.Context, rec *stagingRecord) error {
	if rec == nil {
		return nil
	}
	wait := min(time.Until(rec.LandsBy), stagingRecordEvery+r.Graces.LateMove)
	if wait <= 0 {
		return nil
	}
	r.Hooks.Reach(core.PointOutwaitingLateMoves)
	r.Progress.SetWaiting(fmt.Sprintf("waiting %s before returning run %s: the process that staged it stopped without the answer to a "+
		"move into staging, which the broker may still run (once it has its management lock); a move landing during the return "+
		"would carry returned messages back into staging", wait.Round(time.Second), r.Run.RunID))
	defer r.Progress.SetWaiting("")
	return core.Sleep(ctx, wait)
}
