package move

import (
	"context"
	"fmt"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// recordExpiry is the record kind of the current window's expiries.
const recordExpiry = "expiry"

// expiryRecord lists the source ids and expiries (Unix ms) of the window being staged.
type expiryRecord struct {
	SourceIDs   []int64 `json:"source_ids"`
	Expirations []int64 `json:"expirations"`
}

func (rec expiryRecord) byID() map[int64]int64 {
	m := make(map[int64]int64, len(rec.SourceIDs))
	for i, id := range rec.SourceIDs {
		if i < len(rec.Expirations) {
			m[id] = rec.Expirations[i]
		}
	}
	return m
}

// expiryWindow is the window of expiring messages being staged and relayed. The relay reads it;
// only staging (this file) and a resume or return that finds a recorded window set it.
type expiryWindow struct {
	// expiries holds the source expiry (Unix ms) of the window's staged messages, by source id.
	expiries map[int64]int64
	// active says that every staged message should be in the window.
	active bool
	// until, when positive, is the count of confirmations at which staging should be empty
	// (the window is being drained); the relay then checks at once whether it is done.
	until int64
}

// begin takes rec as the window being staged.
func (w *expiryWindow) begin(rec expiryRecord) { w.expiries, w.active = rec.byID(), true }

// end says that what is staged next is not in the window; its expiries stay known.
func (w *expiryWindow) end() { w.active = false }

// resume takes the window an earlier process recorded, whose messages may still be staged.
func (w *expiryWindow) resume(rec *expiryRecord) {
	if rec != nil {
		w.expiries = rec.byID()
	}
}

// expiryOf returns the recorded expiry of source message id.
func (w *expiryWindow) expiryOf(id int64) (int64, bool) {
	exp, ok := w.expiries[id]
	return exp, ok
}

// drainUntil marks the window as drained once confirmations reaches n; the returned function
// clears the mark.
func (w *expiryWindow) drainUntil(n int64) (undo func()) {
	w.until = n
	return func() { w.until = 0 }
}

// drained reports whether the window being drained should now be empty.
func (w *expiryWindow) drained(confirmations int64) bool {
	return w.until > 0 && confirmations >= w.until
}

// expiringFilter narrows a staging filter to messages with an expiry, keptFilter to those without.
func expiringFilter(filter string) string { return "(" + filter + ") AND AMQExpiration > 0" }

func keptFilter(filter string) string { return "(" + filter + ") AND AMQExpiration = 0" }

// maxExpiryWindows bounds the window loop of one staging filter (a billion messages at the
// default window).
const maxExpiryWindows = 1_000_000

// stageExpiring stages, window by window, the messages of filter that carry an expiry, relaying
// each window before the next: record the window's expiries, move it, relay it. It returns when
// the source holds no more expiring messages that a browse can see.
func (r *runner) stageExpiring(ctx context.Context, filter string) error {
	staging := StagingQueue(r.Run.RunID)
	expiring := expiringFilter(filter)
	for window := 0; window < maxExpiryWindows; window++ {
		// What is staged goes first: the last window, or what an earlier process left.
		if err := r.drainStaging(ctx); err != nil {
			return err
		}
		var found []artemis.BrowsedMessage
		err := r.outlastOutage(ctx, func() (err error) {
			found, err = r.Source.BrowseMessages(ctx, r.Run.Spec.Source.Queue, expiring, r.Opts.ExpiryWindow)
			return err
		})
		if err != nil {
			return fmt.Errorf("run %s: reading the expiry of the messages to stage: %w", r.Run.RunID, err)
		}
		if len(found) == 0 {
			return nil
		}
		rec := expiryRecord{SourceIDs: make([]int64, len(found)), Expirations: make([]int64, len(found))}
		for i, m := range found {
			rec.SourceIDs[i], rec.Expirations[i] = m.ID, m.Expiration
		}
		// Recorded before the move: a process that dies after it still finds every expiry.
		if err := r.writeRecord(ctx, recordExpiry, rec); err != nil {
			return err
		}
		r.window.begin(rec)
		var n int
		err = r.outlastOutage(ctx, func() (err error) {
			n, err = r.stagingMove(ctx, artemis.MoveRequest{
				Queue: r.Run.Spec.Source.Queue, Filter: expiring, TargetQueue: staging, RejectDuplicates: false, Count: len(found),
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("staging run %s: %w", r.Run.RunID, err)
		}
		r.afterStaged(n)
		if n == 0 {
			// The browsed messages went elsewhere (a consumer took them); the bulk pass and
			// its count of expiries it could not keep cover anything left.
			break
		}
		if err := r.drainStaging(ctx); err != nil {
			return err
		}
		r.window.end()
	}
	r.window.end()
	return nil
}

// drainStaging relays until the staging queue is empty.
func (r *runner) drainStaging(ctx context.Context) error {
	q, err := r.Source.Queue(ctx, StagingQueue(r.Run.RunID))
	if err != nil {
		return fmt.Errorf("run %s: %w", r.Run.RunID, err)
	}
	if q.MessageCount == 0 {
		return nil
	}
	defer r.Progress.EnterPhase(core.PhaseRelaying)()
	// Nothing is delivered before the relay attaches, so the count is what there is to relay:
	// the relay checks for the end once it has relayed as many, instead of waiting out an
	// idle period after each window.
	defer r.window.drainUntil(r.Progress.Relayed.Confirmations() + q.MessageCount)()
	return r.relay(ctx, stagingIsComplete())
}

// writeRecord stores one record in the run's manifest queue.
func (r *runner) writeRecord(ctx context.Context, kind string, record any) error {
	conn, err := r.ConnectSource(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	sender, err := conn.NewSender(ctx, manifestFQQN(r.Run.RunID), artemis.SenderOptions{MaxInFlight: 1})
	if err != nil {
		return fmt.Errorf("writing the %s record of run %s: %w", kind, r.Run.RunID, err)
	}
	return sendRecord(ctx, sender, r.Run.RunID, kind, record, r.recordWait())
}
