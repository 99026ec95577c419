package move

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Manifest records a run on its source broker, as one durable message in the run's manifest
// queue beside staging. With it a fresh process (or an operator) can tell what an unfinished run
// is, resume it with the same t0, or return its messages, from the broker alone.
type Manifest struct {
	FormatVersion int `json:"format_version"`
	// The run's fields are the manifest's own in its JSON: run_id, t0, spec and the nodes.
	core.Run
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
}

const manifestFormatVersion = 1

// manifestReadTimeout bounds the wait for the first staged message of a run without a
// manifest (firstStagedOrigin): a browse sees the end of a queue only by waiting.
const manifestReadTimeout = 1500 * time.Millisecond

// recordReadTries is how many times a read of a run's records browses its manifest queue
// before it reports the records late (errRecordsLate), each try waiting twice as long as the
// one before (core.Graces.RecordRead the first).
const recordReadTries = 3

// The manifest queue is a last-value queue keyed on recordKind: it keeps the latest record of
// each kind (the manifest, the in-flight journal, the current expiry window's record,
// expiryRecord, and the staging record, stagingRecord), so none ever needs consuming.
const (
	recordKindProperty = "studio_record"
	recordManifest     = "manifest"
	recordInFlight     = "in-flight"
)

// inFlightRecord lists the source ids of the batch the relay is about to send. If the process
// dies, these are the staged messages the target may hold although staging still does; a
// return relays them instead of putting them back, so that none ends up on both brokers.
//
// It also carries the run's count of relayed messages before this batch, so that a resumed run
// reports the total over every process that worked on it, and the ids of the last batches the
// target confirmed (counted in RelayedBefore): if the source lost their acknowledgements, they
// are back in staging, and a resumed run counts sending them again as a resend.
//
// TargetDiscarded lists the staged messages that the target confirmed and its queue did not
// take (core.ErrTargetDiscards): the target holds none of them, and has spent their duplicate
// ids, so a message sent again under its id would be dropped as a duplicate and lost. A run
// with such a record is not resumed: it is returned, and moved again as a new run.
//
// Owed lists the ids an earlier process's record said the target may hold that this process
// has not relayed yet (runner.owed): still staged, they may be on the target. They are owed,
// not in flight: RelayedBefore counts them or not as that earlier record's reader counted them.
type inFlightRecord struct {
	SourceIDs       []int64 `json:"source_ids"`
	RelayedBefore   int64   `json:"relayed_before"`
	Confirmed       []int64 `json:"confirmed,omitempty"`
	TargetDiscarded []int64 `json:"target_discarded,omitempty"`
	Owed            []int64 `json:"owed,omitempty"`
}

// mayBeOnTarget returns the ids of the staged messages the target may hold: the in-flight
// batches, the confirmed ones, which are back in staging when the source lost their
// acknowledgements, and those owed to an earlier record. A return relays these (the target drops those it has as duplicates)
// rather than putting them back on the source.
func (r *inFlightRecord) mayBeOnTarget() []int64 {
	out := slices.Clone(r.SourceIDs)
	listed := make(map[int64]struct{}, len(r.SourceIDs)+len(r.Confirmed)+len(r.Owed))
	for _, id := range r.SourceIDs {
		listed[id] = struct{}{}
	}
	for _, ids := range [][]int64{r.Confirmed, r.Owed} {
		for _, id := range ids {
			if _, ok := listed[id]; !ok {
				listed[id] = struct{}{}
				out = append(out, id)
			}
		}
	}
	return out
}

// uncounted returns the in-flight ids that RelayedBefore does not count: a message confirmed
// earlier and handed back to staging can be in flight again, and is counted already.
func (r *inFlightRecord) uncounted() []int64 {
	if len(r.Confirmed) == 0 {
		return r.SourceIDs
	}
	counted := make(map[int64]struct{}, len(r.Confirmed))
	for _, id := range r.Confirmed {
		counted[id] = struct{}{}
	}
	out := make([]int64, 0, len(r.SourceIDs))
	for _, id := range r.SourceIDs {
		if _, ok := counted[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// manifestFQQN is the fully qualified name of a run's manifest queue.
func manifestFQQN(runID string) string {
	return artemis.FQQN(StagingQueue(runID), ManifestQueue(runID))
}

// sendRecord puts one record into the manifest queue as a durable message and waits until the
// broker has stored it, or until wait gives up on a broker that grants no credit.
func sendRecord(ctx context.Context, sender *artemis.Sender, runID, kind string, record any, wait artemis.CreditWait) error {
	body, err := json.Marshal(record)
	if err != nil {
		return fmt.Errorf("encoding the %s record of run %s: %w", kind, runID, err)
	}
	ct := "application/json"
	msg := &amqp.Message{
		Header:                &amqp.MessageHeader{Durable: true},
		Properties:            &amqp.MessageProperties{ContentType: &ct, Subject: &runID},
		ApplicationProperties: map[string]any{recordKindProperty: kind},
		Value:                 string(body),
	}
	if err := sender.SendStored(ctx, msg, wait); err != nil {
		var withheld *artemis.CreditWithheldError
		if errors.As(err, &withheld) {
			return fmt.Errorf("run %s: its %s record could not be stored, and the run stopped before sending what the record describes, so "+
				"nothing of it is lost or doubled; apply again once the source broker has room: %w", runID, kind, err)
		}
		return fmt.Errorf("writing the %s record of run %s: %w", kind, runID, err)
	}
	return nil
}

// recordWait is how a running move's record sends wait for credit: up to core.Graces.Credit,
// saying so while they wait.
func (r *runner) recordWait() artemis.CreditWait {
	return artemis.CreditWait{
		Limit: r.Graces.Credit,
		Waiting: func(waited time.Duration) {
			r.Progress.SetWaiting(fmt.Sprintf("waiting: the source broker has granted no credit for %s to store the run's records in %s "+
				"(its disk use above max-disk-usage, or the address full and blocking producers); the run stops after %s",
				waited.Round(time.Second), ManifestQueue(r.Run.RunID), r.Graces.Credit))
		},
		Waited: func() { r.Progress.SetWaiting("") },
	}
}

// writeManifest stores the run's manifest.
func writeManifest(ctx context.Context, conn *artemis.Connection, m Manifest, wait artemis.CreditWait) error {
	sender, err := conn.NewSender(ctx, manifestFQQN(m.RunID), artemis.SenderOptions{MaxInFlight: 1})
	if err != nil {
		return fmt.Errorf("writing the manifest of run %s: %w", m.RunID, err)
	}
	defer sender.Close(context.WithoutCancel(ctx)) //nolint:errcheck // best effort after the outcome is known
	return sendRecord(ctx, sender, m.RunID, recordManifest, m, wait)
}

// ErrNoManifest: the manifest queue exists but holds no manifest (a run that died between
// creating its queues and writing it). It is only ever a real absence: every record the queue
// counts was read, and none was the manifest. A read that did not get every record in time is
// errRecordsLate, never this.
var ErrNoManifest = errors.New("no manifest")

// errRecordsLate: the broker counted records in a run's manifest queue that a browse did not
// deliver in time (a loaded broker, a slow disk). What the run is stays unknown, so nothing may
// be decided from it: not that its manifest is gone, nor which of its messages are in flight.
type errRecordsLate struct {
	runID        string
	stored, read int64
	waited       time.Duration
}

func (e *errRecordsLate) Error() string {
	return fmt.Sprintf("run %s: its manifest queue %s counts %d records, and the broker delivered %d of them to a browser within %s "+
		"in %d tries; nothing of the run was changed: apply (or return it) again, and if this repeats, look at the source broker's load",
		e.runID, ManifestQueue(e.runID), e.stored, e.read, e.waited, recordReadTries)
}

// runRecords are the records of a run's manifest queue.
type runRecords struct {
	Manifest *Manifest
	InFlight *inFlightRecord
	Expiry   *expiryRecord
	Staging  *stagingRecord
}

// recordsOf reads the records of run runID, stored being its manifest queue's message count read
// through management just before. A browse that ends before it delivered every counted record
// is tried again, on a fresh count (a record gone since, taken by another process's discard or
// return, is a real absence), waiting twice as long each time; after the last try the read
// fails with errRecordsLate.
func (e *Mover) recordsOf(ctx context.Context, conn *artemis.Connection, runID string, stored int64, untilManifest bool) (runRecords, error) {
	wait := e.setup.Graces.WithDefaults().RecordRead
	var waited time.Duration
	for try := 1; ; try++ {
		recs, read, err := browseRecords(ctx, conn, runID, stored, untilManifest, e.setup.Hooks.BrowseIdle, wait)
		waited += wait
		if !errors.Is(err, errBrowseEnded) {
			return recs, err
		}
		if try == recordReadTries {
			return recs, &errRecordsLate{runID: runID, stored: stored, read: read, waited: waited}
		}
		if stored, err = e.storedRecords(ctx, runID); err != nil {
			return recs, err
		}
		wait *= 2
	}
}

// errBrowseEnded: a browse of the manifest queue saw no further record for its idle timeout
// before it had read the records the queue counts (or, reading only the manifest, before the
// manifest).
var errBrowseEnded = errors.New("the browse ended before every counted record was read")

// browseRecords browses the manifest queue without consuming it and stops after stored
// records: a last-value queue of four kinds holds at most four, and counting them is what
// lets the read end at once instead of waiting out an idle timeout, as a browse must to see the
// end of a queue. With untilManifest it stops at the manifest, the first record (written first,
// never replaced). A browse that waits out idle before then ends with errBrowseEnded (with
// untilManifest, unless it read the manifest); onIdle, when set, is called when it does. It also returns how many records
// it read.
func browseRecords(ctx context.Context, conn *artemis.Connection, runID string, stored int64, untilManifest bool, onIdle func(), idle time.Duration) (runRecords, int64, error) {
	var recs runRecords
	// The bound guards the loop against a count that kept growing.
	stored = min(stored, maxRecords)
	if stored <= 0 {
		return recs, 0, fmt.Errorf("run %s: %w", runID, ErrNoManifest)
	}
	browser, err := conn.NewBrowser(ctx, manifestFQQN(runID), artemis.BrowserOptions{Credit: int(stored), IdleTimeout: idle})
	if err != nil {
		return recs, 0, fmt.Errorf("reading the manifest of run %s: %w", runID, err)
	}
	defer browser.Close(context.WithoutCancel(ctx)) //nolint:errcheck // nothing to settle on a browser
	read := int64(0)
	for ; read < stored; read++ {
		msg, ok, err := browser.Next(ctx)
		if err != nil {
			return recs, read, fmt.Errorf("reading the manifest of run %s: %w", runID, err)
		}
		if !ok {
			if onIdle != nil {
				onIdle()
			}
			if recs.Manifest == nil || !untilManifest {
				// A full read that misses a record would miss the in-flight one: what the
				// target may hold.
				return recs, read, errBrowseEnded
			}
			break
		}
		if err := recs.add(runID, msg); err != nil {
			return recs, read, err
		}
		if recs.Manifest != nil && untilManifest {
			break
		}
	}
	if recs.Manifest == nil {
		return recs, read, fmt.Errorf("run %s: %w", runID, ErrNoManifest)
	}
	return recs, read, nil
}

// maxRecords bounds a read of the manifest queue, which holds one record of each kind.
const maxRecords = 16

// add decodes one record of the manifest queue by its kind.
func (recs *runRecords) add(runID string, msg *amqp.Message) error {
	text, _ := msg.Value.(string)
	if text == "" {
		text = string(msg.GetData())
	}
	switch msg.ApplicationProperties[recordKindProperty] {
	case recordInFlight:
		var r inFlightRecord
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return fmt.Errorf("run %s: the in-flight record is not readable: %w", runID, err)
		}
		recs.InFlight = &r
	case recordExpiry:
		var r expiryRecord
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return fmt.Errorf("run %s: the expiry record is not readable: %w", runID, err)
		}
		recs.Expiry = &r
	case recordStaging:
		var r stagingRecord
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return fmt.Errorf("run %s: the staging record is not readable: %w", runID, err)
		}
		recs.Staging = &r
	default:
		var m Manifest
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			return fmt.Errorf("run %s: the manifest is not readable: %w", runID, err)
		}
		if m.FormatVersion > manifestFormatVersion {
			return fmt.Errorf("run %s was written by a newer provider (manifest format %d): upgrade the provider", runID, m.FormatVersion)
		}
		recs.Manifest = &m
	}
	return nil
}

// readManifest returns a run's manifest; stored is its manifest queue's message count.
func (e *Mover) readManifest(ctx context.Context, conn *artemis.Connection, runID string, stored int64) (Manifest, error) {
	recs, err := e.recordsOf(ctx, conn, runID, stored, true)
	if err != nil {
		return Manifest{}, err
	}
	return *recs.Manifest, nil
}

// storedRecords reads how many records a run's manifest queue holds; none when it is gone.
func (e *Mover) storedRecords(ctx context.Context, runID string) (int64, error) {
	q, err := e.setup.Source.Queue(ctx, ManifestQueue(runID))
	if errors.Is(err, artemis.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the manifest queue of run %s: %w", runID, err)
	}
	return q.MessageCount, nil
}

// relayedBefore is how many messages earlier processes relayed, each once, by their last
// in-flight record: the count recorded before the last batches they sent, plus the messages of
// those batches that have left staging (the target confirmed them; those still staged are
// relayed, and counted, by this process). It also returns the ids of the batches they last
// confirmed: such a message may be back in staging when its acknowledgement was lost, and
// sending it again is a resend, not a relay.
func (e *Mover) relayedBefore(ctx context.Context, runID string, rec *inFlightRecord) (int64, []int64, error) {
	if rec == nil {
		return 0, nil, nil
	}
	ids := rec.uncounted()
	stillStaged := int64(0)
	for start := 0; start < len(ids); start += countSelectorChunk {
		chunk := ids[start:min(start+countSelectorChunk, len(ids))]
		n, err := e.countStaged(ctx, runID, rangedIDSelector(chunk), len(chunk))
		if err != nil {
			return 0, nil, err
		}
		stillStaged += n
	}
	return rec.RelayedBefore + int64(len(ids)) - stillStaged, rec.Confirmed, nil
}

// oweStaged makes the relay of a resumed run list ids (an earlier process's in-flight
// record's) in its own records until it relays them (runner.owed). Only ids still staged are
// owed: a selector of ids that matches nothing drops them all, so that ids whose messages left
// staging long ago are not carried in every record.
func (e *Mover) oweStaged(ctx context.Context, r *runner, ids []int64) error {
	for start := 0; start < len(ids); start += countSelectorChunk {
		chunk := ids[start:min(start+countSelectorChunk, len(ids))]
		n, err := e.countStaged(ctx, r.Run.RunID, rangedIDSelector(chunk), 1)
		if err != nil {
			return err
		}
		if n > 0 {
			r.owe(chunk)
		}
	}
	return nil
}

// owe adds ids to what the run still owes an earlier process's record (runner.owed).
func (r *runner) owe(ids []int64) {
	if r.owed == nil {
		r.owed = make(map[int64]struct{}, len(ids))
	}
	for _, id := range ids {
		r.owed[id] = struct{}{}
	}
}

// readRecords reads every record of a run's manifest queue.
func (e *Mover) readRecords(ctx context.Context, runID string) (runRecords, error) {
	stored, err := e.storedRecords(ctx, runID)
	if err != nil {
		return runRecords{}, err
	}
	conn, err := core.ConnectManagementNode(ctx, e.setup.Source)
	if err != nil {
		return runRecords{}, err
	}
	defer conn.Close()
	return e.recordsOf(ctx, conn, runID, stored, false)
}

// countStaged counts the staged messages a selector matches, up to limit, with management
// calls that walk the staging queue, in memory and paged (artemis.Client.CountMatches): they
// end when the broker has answered, not after the idle timeout a browse over AMQP must wait
// out to see the end of a queue.
func (e *Mover) countStaged(ctx context.Context, runID, selector string, limit int) (int64, error) {
	n, err := e.setup.Source.CountMatches(ctx, StagingQueue(runID), selector, limit)
	if err != nil {
		return 0, fmt.Errorf("run %s: counting staged messages: %w", runID, err)
	}
	return int64(n), nil
}

// idSelector selects staged messages by their source ids. JMS selectors have no numeric IN, so
// each id is one OR term; callers keep lists to inFlightSelectorChunk ids.
func idSelector(ids []int64) string {
	terms := make([]string, len(ids))
	for i, id := range ids {
		terms[i] = fmt.Sprintf("%s = %d", core.PropOrigMessageID, id)
	}
	return strings.Join(terms, " OR ")
}

// rangedIDSelector is idSelector behind a range test that rejects most staged messages at
// once: the broker evaluates a selector's OR terms one by one for every message it passes, so
// a count over a deep staging queue would cost each message every term. The ids of a batch lie
// close together (the source numbered its messages as they arrived, and the relay takes them in
// that order), so the range holds few messages besides the batch's own.
func rangedIDSelector(ids []int64) string {
	lo, hi := slices.Min(ids), slices.Max(ids)
	return fmt.Sprintf("%s BETWEEN %d AND %d AND (%s)", core.PropOrigMessageID, lo, hi, idSelector(ids))
}

// inFlightSelectorChunk bounds the ids in one selector of a link, and keeps a filtered count
// of them below the broker's cap of 200.
const inFlightSelectorChunk = 100

// countSelectorChunk bounds the ids in one selector that countStaged counts: the default
// batch, so that each of the two batches of an in-flight record (which tend to be all staged
// or all gone) is usually counted in one or two calls.
const countSelectorChunk = core.DefaultBatchSize
