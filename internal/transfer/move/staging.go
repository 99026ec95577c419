package move

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// stagingSettings are the exact-match address settings of a staging address. Each field that
// could make the broker drop, dead-letter, expire or redistribute a staged message is set
// explicitly, since an unset field is inherited from wider matches such as "#". The only
// dead-lettering left is the broker's own for a message it cannot convert for the relay; it
// goes to the run's quarantine queue (deadLetterAddress), not away.
func stagingSettings(brokerVersion, deadLetterAddress string) map[string]any {
	s := map[string]any{
		"addressFullMessagePolicy":  "PAGE", // never DROP, FAIL or BLOCK a staging move
		"maxDeliveryAttempts":       -1,     // never dead-letter by delivery count, however often a relay dies
		"deadLetterAddress":         deadLetterAddress,
		"expiryAddress":             "",
		"expiryDelay":               int64(-1),
		"minExpiryDelay":            int64(-1),
		"maxExpiryDelay":            int64(-1),
		"redistributionDelay":       int64(-1), // never move staged messages to another cluster node
		"sendToDLAOnNoRoute":        false,
		"autoDeleteQueues":          false,
		"autoDeleteAddresses":       false,
		"autoDeleteCreatedQueues":   false,
		"defaultRingSize":           int64(-1),
		"defaultLastValueQueue":     false,
		"defaultPurgeOnNoConsumers": false,
		"maxSizeBytes":              int64(-1),
	}
	if artemis.VersionAtLeast(brokerVersion, 2, 28) {
		// Paging without limit: a page-full policy could drop.
		s["pageLimitBytes"] = int64(-1)
		s["pageLimitMessages"] = int64(-1)
		s["maxSizeMessages"] = int64(-1)
	}
	if !artemis.VersionAtLeast(brokerVersion, 2, 32) {
		// The positional form of older brokers has neither these fields nor a way to leave one
		// unset; they keep what the broker already has.
		for _, k := range []string{"pageLimitBytes", "pageLimitMessages", "maxSizeMessages", "autoDeleteCreatedQueues"} {
			delete(s, k)
		}
	}
	return s
}

// checkStagingSettings verifies the effective settings of a staging address: what the broker
// really applies, after merging every match.
func checkStagingSettings(s artemis.AddressSettings, deadLetterAddress string) error {
	var problems []string
	if s.AddressFullPolicy != "PAGE" {
		problems = append(problems, "address-full-policy is "+s.AddressFullPolicy+", not PAGE")
	}
	if s.MaxDeliveryAttempts > 0 {
		problems = append(problems, fmt.Sprintf("max-delivery-attempts is %d, not -1", s.MaxDeliveryAttempts))
	}
	if s.DeadLetterAddress != deadLetterAddress {
		problems = append(problems, fmt.Sprintf("dead-letter-address is %q, not %q", s.DeadLetterAddress, deadLetterAddress))
	}
	if s.ExpiryAddress != "" {
		problems = append(problems, "expiry-address is "+s.ExpiryAddress)
	}
	if s.ExpiryDelay > 0 {
		problems = append(problems, fmt.Sprintf("expiry-delay is %d", s.ExpiryDelay))
	}
	if s.RedistributionDelay >= 0 {
		problems = append(problems, fmt.Sprintf("redistribution-delay is %d, not -1", s.RedistributionDelay))
	}
	if s.PageFullPolicy != "" && (s.PageLimitBytes > 0 || s.PageLimitMessages > 0) {
		problems = append(problems, "a page limit applies with page-full-policy "+s.PageFullPolicy)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the staging address settings are not in effect (%s); another address-settings entry may override them",
			strings.Join(problems, "; "))
	}
	return nil
}

// checkStagingQueue verifies that nothing about the staging queue could lose a staged message.
func checkStagingQueue(q artemis.QueueInfo) error {
	var problems []string
	if q.RoutingType != "ANYCAST" {
		problems = append(problems, "routing type "+q.RoutingType)
	}
	if !q.Durable {
		problems = append(problems, "not durable")
	}
	if q.RingSize > 0 {
		problems = append(problems, fmt.Sprintf("ring size %d", q.RingSize))
	}
	if q.LastValue {
		problems = append(problems, "last-value")
	}
	if q.PurgeOnNoConsumers {
		problems = append(problems, "purge-on-no-consumers")
	}
	if q.AutoDelete {
		problems = append(problems, "auto-delete")
	}
	if !q.Enabled {
		problems = append(problems, "disabled")
	}
	if q.Filter != "" {
		problems = append(problems, "filter "+q.Filter)
	}
	if len(problems) > 0 {
		return fmt.Errorf("staging queue %s is unsafe: %s", q.Name, strings.Join(problems, ", "))
	}
	return nil
}

// ensureStaging creates (or, on resume, checks) the run's staging address settings and its
// three queues, and verifies that the broker applies them. The settings go in before the
// staging and quarantine queues, so that neither ever exists without them.
func ensureStaging(ctx context.Context, source *artemis.Client, brokerVersion, runID string) error {
	if err := addStagingSettings(ctx, source, brokerVersion, runID); err != nil {
		return err
	}
	if err := source.CreateQueue(ctx, manifestQueueSpec(runID), true); err != nil {
		return fmt.Errorf("setting up staging for run %s: %w", runID, err)
	}
	return createStagingQueues(ctx, source, runID)
}

// createStagingQueues creates (or finds) the run's staging and quarantine queues, once their
// address settings are in, and verifies that the broker applies them.
func createStagingQueues(ctx context.Context, source *artemis.Client, runID string) error {
	staging, quarantine := StagingQueue(runID), QuarantineQueue(runID)
	queues := []artemis.QueueSpec{
		// Max one consumer: a second relay of the same run is refused at attach.
		{Name: staging, Address: staging, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: 1},
		{Name: quarantine, Address: quarantine, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: -1},
	}
	for _, q := range queues {
		if err := source.CreateQueue(ctx, q, true); err != nil {
			return fmt.Errorf("setting up staging for run %s: %w", runID, err)
		}
	}
	return verifyStaging(ctx, source, runID)
}

// manifestQueueSpec is a run's manifest queue: on the staging address, a last-value queue that
// keeps the latest record of each kind. It admits one consumer, the run's lease (holdLease):
// the broker itself lets one process at a time work on a run, relay or return, with or without
// a ledger. Browsers, which read the records, are not consumers to the broker.
func manifestQueueSpec(runID string) artemis.QueueSpec {
	return artemis.QueueSpec{Name: ManifestQueue(runID), Address: StagingQueue(runID), RoutingType: "ANYCAST", Durable: true,
		RingSize: -1, MaxConsumers: 1, LastValue: true, LastValueKey: recordKindProperty}
}

// createManifestQueue creates a new run's manifest queue, the first of its queues: from then
// on the next apply finds the run, whatever instant it is stopped at (decideRecovery).
func createManifestQueue(ctx context.Context, source *artemis.Client, runID string) error {
	if err := source.CreateQueue(ctx, manifestQueueSpec(runID), true); err != nil {
		return fmt.Errorf("creating the manifest queue of run %s: %w", runID, err)
	}
	return nil
}

// addStagingSettings puts in the exact-match address settings of the run's staging and
// quarantine addresses.
func addStagingSettings(ctx context.Context, source *artemis.Client, brokerVersion, runID string) error {
	staging, quarantine := StagingQueue(runID), QuarantineQueue(runID)
	if err := source.AddAddressSettings(ctx, staging, stagingSettings(brokerVersion, quarantine)); err != nil {
		return fmt.Errorf("setting up staging for run %s: %w", runID, err)
	}
	if err := source.AddAddressSettings(ctx, quarantine, stagingSettings(brokerVersion, "")); err != nil {
		return fmt.Errorf("setting up staging for run %s: %w", runID, err)
	}
	return nil
}

// verifyStaging checks the effective settings and the queue before anything is moved.
func verifyStaging(ctx context.Context, source *artemis.Client, runID string) error {
	staging := StagingQueue(runID)
	settings, err := source.AddressSettings(ctx, staging)
	if err != nil {
		return fmt.Errorf("verifying staging of run %s: %w", runID, err)
	}
	if err := checkStagingSettings(settings, QuarantineQueue(runID)); err != nil {
		return fmt.Errorf("run %s on broker %q: %w", runID, source.Name(), err)
	}
	for _, name := range []string{staging, QuarantineQueue(runID)} {
		q, err := source.Queue(ctx, name)
		if err != nil {
			return fmt.Errorf("verifying staging of run %s: %w", runID, err)
		}
		if err := checkStagingQueue(q); err != nil {
			return fmt.Errorf("run %s on broker %q: %w", runID, source.Name(), err)
		}
	}
	return nil
}

// stageAndRelay moves the run's selection from the source queue into staging, broker-side, and
// relays it. For each staging filter the messages with an expiry go first, window by window,
// each relayed before the next (see stageExpiring). The rest is then staged in chunks of at
// most ChunkSize messages while the relay takes what is already staged, never more than
// stageAheadChunks chunks ahead of it: staging and relaying overlap, and the relay finishes
// once staging is complete and the staging queue empty. Each
// message moves in its own broker transaction, so an interrupted pass leaves every message in
// exactly one of the two queues; running this again continues where it stopped.
func (r *runner) stageAndRelay(ctx context.Context) error {
	filters := r.Run.Spec.Selection.StageFilters(r.Run.T0)
	for _, filter := range filters {
		if err := r.stageExpiring(ctx, filter); err != nil {
			r.settleStaging(ctx)
			return err
		}
	}
	r.Progress.SetPhase(core.PhaseRelaying)
	// Staging stops when the relay fails, and the relay when staging fails.
	bothCtx, stop := context.WithCancel(ctx)
	defer stop()
	stagingDone := make(chan struct{})
	stageErr := make(chan error, 1)
	go func() {
		err := r.stageBulk(bothCtx, filters)
		if err != nil {
			stop()
		} else {
			r.Progress.StagingComplete()
		}
		r.settleStaging(ctx)
		close(stagingDone)
		stageErr <- err
	}()
	relayErr := r.relay(bothCtx, stagingState{done: stagingDone})
	stop()
	err := <-stageErr
	if err != nil && (relayErr == nil || ctx.Err() == nil && errors.Is(relayErr, context.Canceled)) {
		return err // staging failed first; the relay only stopped for it
	}
	return relayErr
}

// stageBulk stages what the expiry windows left of each filter.
func (r *runner) stageBulk(ctx context.Context, filters []string) error {
	for _, filter := range filters {
		if _, err := r.stageChunks(ctx, keptFilter(filter)); err != nil {
			return err
		}
		// Expiring messages no browse saw: scheduled ones (a browse skips them) and any that
		// reached the queue during staging. They move without their expiry, and are counted.
		n, err := r.stageChunks(ctx, expiringFilter(filter))
		if err != nil {
			return err
		}
		r.Progress.AddExpiryLost(int64(n))
	}
	return nil
}

// stageChunks moves the messages of filter into staging in chunks.
func (r *runner) stageChunks(ctx context.Context, filter string) (int, error) {
	staging := StagingQueue(r.Run.RunID)
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		if err := r.waitForRelay(ctx, staging); err != nil {
			return total, err
		}
		var n int
		err := r.outlastOutage(ctx, func() (err error) {
			n, err = r.stagingMove(ctx, artemis.MoveRequest{
				Queue: r.Run.Spec.Source.Queue, Filter: filter, TargetQueue: staging, RejectDuplicates: false, Count: r.Opts.ChunkSize,
			})
			return err
		})
		if err != nil {
			return total, fmt.Errorf("staging run %s: %w", r.Run.RunID, err)
		}
		total += n
		r.afterStaged(n)
		if n < r.Opts.ChunkSize {
			return total, nil
		}
	}
}

// stageAheadChunks bounds how far staging runs ahead of the relay, in chunks: staging waits
// while the staging queue holds more. A million-message move (make bench, synced brokers) staged
// 586,000 messages ahead of the relay: the staging queue paged, the relay read it back from
// page files, and staging and the relay contended for the source broker all along. Five chunks
// (10,000 messages by default) keep the relay's prefetch (three batches) fed with room to spare.
const stageAheadChunks = 5

// stageWaitPoll is how often a waiting staging pass looks at what the relay has confirmed, and
// stageWaitStall how long it waits for a relay that takes nothing before it stages on anyway:
// a relay held up (a full target, an outage) then finds the rest staged, as before the window.
const (
	stageWaitPoll  = 100 * time.Millisecond
	stageWaitStall = 15 * time.Second
)

// waitForRelay holds the next staging move while the staging queue holds stageAheadChunks
// chunks or more and the relay is taking them. The window is best effort: when the depth cannot
// be read, staging goes on.
//
// The broker is asked for the depth once per staging move; while it waits, the depth is that
// read less what the relay has confirmed since, which this process counts (the relay accepts a
// staged message only once the target confirmed it). The count cannot put the depth too low:
// nothing else adds to staging meanwhile, and a message that leaves it otherwise (quarantined)
// only makes the wait longer, up to stageWaitStall. Reading the depth every poll cost the source
// broker two management requests (a search and a read of every attribute) every 100 ms, 1.5-2.2
// ms of its CPU together (2.40, a kept-alive connection): in a move of 100,000 x 1 KiB on synced
// brokers, 345 of the 673 requests the source answered were these reads of the staging queue.
// Now it is one request (QueueDepth, 0.7-0.9 ms) per staging move.
func (r *runner) waitForRelay(ctx context.Context, staging string) error {
	ahead := int64(stageAheadChunks * r.Opts.ChunkSize)
	if r.Hooks.StagingDepthRead != nil {
		r.Hooks.StagingDepthRead()
	}
	depth, err := r.Source.QueueDepth(ctx, staging)
	if err != nil || depth < ahead {
		return ctx.Err()
	}
	readAt := r.Progress.Relayed.Confirmations()
	last, since := readAt, time.Now()
	for {
		if err := core.Sleep(ctx, stageWaitPoll); err != nil {
			return err
		}
		left := r.Progress.Relayed.Confirmations()
		if depth-(left-readAt) < ahead {
			return nil
		}
		if left > last {
			last, since = left, time.Now()
		} else if time.Since(since) > stageWaitStall {
			return nil
		}
	}
}

// moveUncut runs one broker-side move and waits for its answer even when ctx ends meanwhile
// (for moveGrace at most). The broker finishes a move it has begun whether or not anyone waits:
// a request cut short by a stop left its messages moved but uncounted, so a run's staged count,
// in state and in the ledger, missed a whole chunk (make test, 1,500 of 2,000). Callers check
// ctx before each move, so a stop still begins no new one.
//
// lease, this process's lease on the run, fences every attempt of the move: the first, and each
// retry the client makes after the broker's management lock refused it as busy (seconds apart,
// 15 s in all). Checked only before the first, a process that lost its lease during those waits
// would still move messages into or out of a run another process now holds.
func moveUncut(ctx context.Context, c *artemis.Client, lease *runLease, req artemis.MoveRequest) (int, error) {
	moveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), moveGrace)
	defer cancel()
	req.Fence = lease.fence
	return c.MoveMessages(moveCtx, req)
}

// moveGrace bounds the wait for a move begun before a stop: the broker's management lock
// bounds one move to a minute (MaxChunkSize keeps it far inside), plus retries of a busy lock.
const moveGrace = 2 * time.Minute

// outlastOutage calls op until it succeeds, fails for another reason than an unreachable
// broker, or the broker stays unreachable for longer than the retry budget. A move that fails
// midway has moved a prefix, so calling it again is safe.
func (r *runner) outlastOutage(ctx context.Context, op func() error) error {
	var since time.Time
	for attempt := 0; ; attempt++ {
		err := op()
		outage := errors.Is(err, artemis.ErrUnreachable) || artemis.IsConnectionLost(err)
		if err == nil || !outage || ctx.Err() != nil {
			return err
		}
		if since.IsZero() {
			since = time.Now()
		}
		if time.Since(since) > r.Opts.RetryBudget {
			return fmt.Errorf("broker %q stayed unreachable for more than %s: %w", r.Source.Name(), r.Opts.RetryBudget, err)
		}
		r.Progress.SetWaiting("waiting: the source broker is unreachable, retrying (" + err.Error() + ")")
		if err := core.Sleep(ctx, core.Backoff(attempt)); err != nil {
			return err
		}
	}
}

// afterStaged counts and reports n messages moved into staging.
func (r *runner) afterStaged(n int) {
	if n <= 0 {
		return
	}
	r.Progress.AddStaged(int64(n))
	if r.Hooks.AfterStageChunk != nil {
		r.Hooks.AfterStageChunk()
	}
}

// removeStaging deletes the empty staging and quarantine queues, their settings and the
// manifest, the reverse of a run's start. The manifest goes last: while it exists the run can be
// found and finished again (a run found with its manifest and without staging is resumed, and
// finds nothing left to move). lease, this process's lease on the run, is checked before each
// deletion.
func removeStaging(ctx context.Context, source *artemis.Client, lease *runLease, runID string, h core.Hooks) error {
	for _, name := range []string{StagingQueue(runID), QuarantineQueue(runID)} {
		// MessageCount can miss a message the broker failed to convert for the relay (it stays
		// in staging uncounted); StoredMessages lists the queue too.
		stored, err := source.StoredMessages(ctx, name)
		switch {
		case errors.Is(err, artemis.ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("removing staging of run %s: %w", runID, err)
		case stored.Counted > 0:
			return fmt.Errorf("run %s: queue %s still holds %d messages; not removing it", runID, name, stored.Counted)
		case stored.Listed > 0:
			return fmt.Errorf("run %s: queue %s still holds messages the broker does not count; not removing it", runID, name)
		}
		if name == StagingQueue(runID) {
			h.Reach(core.PointStagingChecked)
		}
		if err := lease.fence(ctx); err != nil {
			return err
		}
		if err := source.DestroyQueue(ctx, name); err != nil && !errors.Is(err, artemis.ErrNotFound) {
			return fmt.Errorf("removing staging of run %s: %w", runID, err)
		}
		if name == StagingQueue(runID) {
			h.Reach(core.PointStagingRemoved)
		}
	}
	for _, match := range []string{StagingQueue(runID), QuarantineQueue(runID)} {
		if err := source.RemoveAddressSettings(ctx, match); err != nil {
			return fmt.Errorf("removing the staging settings of run %s: %w", runID, err)
		}
	}
	h.Reach(core.PointSettingsRemoved)
	if err := lease.fence(ctx); err != nil {
		return err
	}
	if err := source.DestroyQueue(ctx, ManifestQueue(runID)); err != nil && !errors.Is(err, artemis.ErrNotFound) {
		return fmt.Errorf("removing the manifest of run %s: %w", runID, err)
	}
	return nil
}
