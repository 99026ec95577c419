package transfer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// Options tune a run. The zero value of each field means its documented default.
type Options struct {
	// ChunkSize bounds how many messages one broker-side staging move takes, keeping each
	// management call far inside the broker's one-minute management lock. Default 2000.
	ChunkSize int
	// BatchSize is how many messages the relay sends before waiting for their confirmations
	// (and the most it holds unconfirmed). Default 500.
	BatchSize int
	// MaxInFlightBytes bounds the bytes of messages held in this process at once, by sizing
	// the staging prefetch and each batch. Default 32 MiB. A single message larger than this
	// is still relayed, alone.
	MaxInFlightBytes int64
	// RetryBudget is how long the relay keeps reconnecting to a broker that went away before
	// it gives up (staging intact). Default 5 minutes.
	RetryBudget time.Duration
	// IdleWait is how long the relay waits for a staged message before it checks whether the
	// run is finished. Default 1 second.
	IdleWait time.Duration
	// Progress, when set, is called after each staging chunk and relay batch and whenever the
	// run starts or stops waiting. It must not block.
	Progress func(Progress)
	// CreatedBy is recorded in a new run's manifest.
	CreatedBy string
	// ExpiryWindow is how many messages with an expiry are staged, and relayed, at a time:
	// their expiries are recorded on the source broker before the move and held in memory by
	// the relay. Default 1000.
	ExpiryWindow int
}

func (o Options) withDefaults() Options {
	if o.ChunkSize <= 0 {
		o.ChunkSize = 2000
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.MaxInFlightBytes <= 0 {
		o.MaxInFlightBytes = 32 << 20
	}
	if o.RetryBudget <= 0 {
		o.RetryBudget = 5 * time.Minute
	}
	if o.IdleWait <= 0 {
		o.IdleWait = time.Second
	}
	if o.ExpiryWindow <= 0 {
		o.ExpiryWindow = 1000
	}
	return o
}

// Progress is a snapshot of a run, for logs.
type Progress struct {
	RunID     string
	Phase     string // staging, relaying, returning, finishing
	Staged    int64  // moved into staging by this process
	Relayed   int64  // confirmed by the target and removed from staging by this process
	Returned  int64  // moved back to the source by this process
	Remaining int64  // in staging now (as last read)
	Rate      float64
	Waiting   string // why the run waits, empty when it does not
	Elapsed   time.Duration
}

// Result is what a finished (or stopped) run did in this process.
type Result struct {
	RunID   string
	T0      time.Time
	Resumed bool
	Staged  int64
	Relayed int64
	// RelayedTotal counts the messages relayed by every process that worked on the run,
	// as recorded on the source broker.
	RelayedTotal int64
	// Resent counts the copies this process sent again of messages the target had already
	// confirmed (their acknowledgement on the source was lost, e.g. when the source broker
	// restarted); the target's duplicate detection dropped them. They are not in Relayed.
	Resent   int64
	Returned int64
	// Remaining is what stays in staging when the run stopped early.
	Remaining int64
	// ExpiryKept counts the relayed messages that got their source expiry back on the target.
	ExpiryKept int64
	// ExpiryLost counts the messages with an expiry that reached staging without a record of
	// it, and so the target without one: scheduled messages (the browse that reads expiries
	// skips them) and messages a consumer or producer moved about while they were staged.
	ExpiryLost int64
}

// errQuarantined: the broker dead-lettered staged messages it could not convert for the relay
// into the run's quarantine queue. Resuming cannot help; returning the run can.
var errQuarantined = errors.New("messages in quarantine")

// ErrInterrupted wraps the error of a run stopped before it finished (cancelled, timed out, a
// broker gone for longer than the retry budget). Nothing is lost: every message is on the
// source, in staging or on the target, and running the same spec again resumes the run.
var ErrInterrupted = errors.New("run interrupted")

// Engine runs transfers between two brokers.
type Engine struct {
	Source, Target *artemis.Client
	Options        Options
	// Hooks stop a run at precise points, for tests; the zero value in production.
	Hooks Hooks
}

// Hooks are called at precise points of a run so that tests can stop or kill it there instead
// of after a timeout, which would depend on the machine's speed. Each nil hook is skipped.
type Hooks struct {
	// BeforeSend runs before each message is sent to the target.
	BeforeSend func()
	// AfterConfirm runs after each target outcome is received, before the staged message is
	// accepted.
	AfterConfirm func()
	// AfterStageChunk runs after each broker-side staging move.
	AfterStageChunk func()
}

// runner is one run in this process.
type runner struct {
	source, target *artemis.Client
	opts           Options
	m              Manifest
	hooks          Hooks
	targetPolicy   string
	// selector limits the relay to some staged messages (a return relays the in-flight ones).
	selector string

	started time.Time
	// staged is atomic: staging and relaying overlap (see stageAndRelay).
	staged atomic.Int64
	// tally counts the relayed messages, each once, across reconnects and processes.
	tally               *relayTally
	returned, remaining int64
	phase               string

	// expiries holds the source expiry (Unix ms) of the staged messages of the current expiry
	// window, by source id; inExpiryWindow says that every staged message should be in it.
	expiries       map[int64]int64
	inExpiryWindow bool
	// drainUntil, when positive, is the relayed count at which the staging queue should be
	// empty (a window being drained); the relay then checks at once whether it is done.
	drainUntil             int64
	expiryKept, expiryLost atomic.Int64

	mu      sync.Mutex
	waiting string
	// reportMu keeps the Progress callback from being called by two goroutines at once.
	reportMu sync.Mutex
}

// UnfinishedRun is a run whose staging queue still exists on the source broker.
type UnfinishedRun struct {
	RunID         string
	T0            time.Time
	StagingQueue  string
	Messages      int64
	Consumers     int
	Manifest      *Manifest // nil when it is missing or unreadable
	ManifestError error
}

// UnfinishedRuns lists the runs with a staging queue on the source broker: those of spec when
// spec is not nil, else all. Oldest first.
func (e *Engine) UnfinishedRuns(ctx context.Context, spec *Spec) ([]UnfinishedRun, error) {
	prefix := StagingPrefix
	if spec != nil {
		prefix += spec.Key() + "-"
	}
	queues, err := e.Source.ListQueues(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("looking for unfinished runs on broker %q: %w", e.Source.Name(), err)
	}
	var runs []UnfinishedRun
	var conn *artemis.Connection
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	for _, q := range queues {
		id := RunIDFromQueue(q.Name)
		if id == "" {
			continue
		}
		_, t0, _ := ParseRunID(id)
		run := UnfinishedRun{RunID: id, T0: t0, StagingQueue: q.Name, Messages: q.MessageCount, Consumers: q.ConsumerCount}
		if conn == nil {
			if conn, err = connectManagementNode(ctx, e.Source); err != nil {
				return nil, fmt.Errorf("reading run manifests on broker %q: %w", e.Source.Name(), err)
			}
		}
		if m, err := readManifest(ctx, conn, id); err == nil {
			run.Manifest = &m
		} else {
			run.ManifestError = err
		}
		runs = append(runs, run)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].T0.Before(runs[j].T0) })
	return runs, nil
}

// Move runs spec to the end: it resumes the unfinished run of spec when there is one, else
// starts a new run with t0 = now.
func (e *Engine) Move(ctx context.Context, spec Spec) (Result, error) {
	return e.move(ctx, spec, e.Hooks)
}

func (e *Engine) move(ctx context.Context, spec Spec, h Hooks) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	runs, err := e.UnfinishedRuns(ctx, &spec)
	if err != nil {
		return Result{}, err
	}
	switch len(runs) {
	case 0:
		return e.start(ctx, spec, h)
	case 1:
		return e.resume(ctx, runs[0].RunID, &spec, h)
	default:
		ids := make([]string, len(runs))
		for i, r := range runs {
			ids[i] = r.RunID
		}
		return Result{}, fmt.Errorf("%d unfinished runs of this transfer on broker %q (%s): resume or return them one at a time",
			len(runs), e.Source.Name(), strings.Join(ids, ", "))
	}
}

// RefusedError is a transfer the refusal rules stopped: a new one before anything moved, a
// resumed one before anything more moved.
type RefusedError struct {
	Findings []preflight.Finding // the errors among the findings
	// ResumedRunID is the run that was not resumed; empty for a new transfer.
	ResumedRunID string
}

func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		parts[i] = f.Summary + ": " + f.Detail
		if f.Attribute != "" {
			parts[i] = f.Attribute + ": " + parts[i]
		}
	}
	if e.ResumedRunID != "" {
		return fmt.Sprintf("run %s is not resumed, and its staged messages stay in %s: %s", e.ResumedRunID,
			StagingQueue(e.ResumedRunID), strings.Join(parts, "; "))
	}
	return "the transfer is refused before anything moved: " + strings.Join(parts, "; ")
}

// start creates a new run: the refusal rules first, then staging settings and queues, then
// the manifest, then the work.
func (e *Engine) start(ctx context.Context, spec Spec, h Hooks) (Result, error) {
	if err := e.check(ctx, spec); err != nil {
		return Result{}, err
	}
	srcInfo, err := e.Source.BrokerInfo(ctx)
	if err != nil {
		return Result{}, err
	}
	tgtInfo, err := e.Target.BrokerInfo(ctx)
	if err != nil {
		return Result{}, err
	}
	if err := e.resolveAddresses(ctx, &spec); err != nil {
		return Result{}, err
	}
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	m := Manifest{
		FormatVersion: manifestFormatVersion, RunID: NewRunID(spec, t0), T0: t0, Spec: spec,
		SourceNodeID: srcInfo.NodeID, TargetNodeID: tgtInfo.NodeID, CreatedAt: time.Now().UTC(), CreatedBy: e.Options.CreatedBy,
	}
	if err := ensureStaging(ctx, e.Source, srcInfo.Version, m.RunID); err != nil {
		return Result{}, err
	}
	conn, err := connectRunNode(ctx, e.Source, m.RunID, "source", m.SourceNodeID)
	if err != nil {
		return Result{}, err
	}
	err = writeManifest(ctx, conn, m)
	_ = conn.Close()
	if err != nil {
		return Result{}, err
	}
	return e.execute(ctx, m, false, h)
}

// check applies the refusal rules to spec against both brokers as they are now, and returns a
// *RefusedError when any refuses.
func (e *Engine) check(ctx context.Context, spec Spec) error {
	findings, err := e.Preflight(ctx, spec)
	if err != nil {
		return err
	}
	if !preflight.HasErrors(findings) {
		return nil
	}
	refused := &RefusedError{}
	for _, f := range findings {
		if f.Severity == preflight.Error {
			refused.Findings = append(refused.Findings, f)
		}
	}
	return refused
}

// Resume finishes an unfinished run, found by its id on the source broker. expect, when not
// nil, must describe the same transfer as the run's manifest.
func (e *Engine) Resume(ctx context.Context, runID string, expect *Spec) (Result, error) {
	return e.resume(ctx, runID, expect, e.Hooks)
}

func (e *Engine) resume(ctx context.Context, runID string, expect *Spec, h Hooks) (Result, error) {
	m, err := e.loadManifest(ctx, runID)
	if err != nil {
		return Result{}, err
	}
	if expect != nil && expect.Key() != m.Spec.Key() {
		return Result{}, fmt.Errorf("run %s moves %s to %s, not %s to %s", runID, m.Spec.Source, m.Spec.Target, expect.Source, expect.Target)
	}
	// The brokers may have changed since the run began (a DROP policy on the target, duplicate
	// detection turned off): the rest of the run meets the same rules as a new one.
	if err := e.check(ctx, m.Spec); err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			refused.ResumedRunID = runID
		}
		return Result{}, err
	}
	srcInfo, err := e.Source.BrokerInfo(ctx)
	if err != nil {
		return Result{}, err
	}
	if err := ensureStaging(ctx, e.Source, srcInfo.Version, runID); err != nil {
		return Result{}, err
	}
	return e.execute(ctx, m, true, h)
}

func (e *Engine) loadManifest(ctx context.Context, runID string) (Manifest, error) {
	if _, err := e.Source.Queue(ctx, StagingQueue(runID)); err != nil {
		if errors.Is(err, artemis.ErrNotFound) {
			return Manifest{}, fmt.Errorf("run %s: no staging queue %s on broker %q: the run finished or was returned",
				runID, StagingQueue(runID), e.Source.Name())
		}
		return Manifest{}, err
	}
	conn, err := connectManagementNode(ctx, e.Source)
	if err != nil {
		return Manifest{}, err
	}
	defer conn.Close()
	return readManifest(ctx, conn, runID)
}

// resolveAddresses fills in the source and target addresses from the brokers.
func (e *Engine) resolveAddresses(ctx context.Context, spec *Spec) error {
	src, err := e.Source.Queue(ctx, spec.Source.Queue)
	if err != nil {
		return fmt.Errorf("source queue: %w", err)
	}
	if spec.Source.Address != "" && spec.Source.Address != src.Address {
		return fmt.Errorf("source queue %s is on address %q, not %q", spec.Source, src.Address, spec.Source.Address)
	}
	spec.Source.Address = src.Address
	tgt, err := e.Target.Queue(ctx, spec.Target.Queue)
	if err != nil {
		return fmt.Errorf("target queue: %w", err)
	}
	if spec.Target.Address != "" && spec.Target.Address != tgt.Address {
		return fmt.Errorf("target queue %s is on address %q, not %q", spec.Target, tgt.Address, spec.Target.Address)
	}
	spec.Target.Address = tgt.Address
	return nil
}

// execute stages what is left of the selection, relays, and removes staging.
// leaseSelector matches no message: the lease receiver exists only to be counted.
const leaseSelector = "studio_lease = 'held'"

// holdLease attaches a receiver that takes no message to the run's manifest queue for as long
// as this process works on the run: a consumer there says the run is alive, so it is not
// reported as orphaned while it stages (the staging queue's own consumer appears only when
// the relay starts). It dies with the process.
func (e *Engine) holdLease(ctx context.Context, runID, nodeID string) (release func(), err error) {
	conn, err := connectRunNode(ctx, e.Source, runID, "source", nodeID)
	if err != nil {
		return nil, err
	}
	if _, err := conn.NewReceiver(ctx, manifestFQQN(runID), artemis.ReceiverOptions{Credit: 1, Selector: leaseSelector}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("run %s: taking the run's lease: %w", runID, err)
	}
	return func() { _ = conn.Close() }, nil
}

func (e *Engine) execute(ctx context.Context, m Manifest, resumed bool, h Hooks) (Result, error) {
	r := &runner{source: e.Source, target: e.Target, opts: e.Options.withDefaults(), m: m, hooks: h, started: time.Now(),
		tally: newRelayTally(0, nil)}
	res := Result{RunID: m.RunID, T0: m.T0, Resumed: resumed}
	release, err := e.holdLease(ctx, m.RunID, m.SourceNodeID)
	if err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	defer release()
	if resumed {
		base, confirmed, err := e.relayedBefore(ctx, m.RunID)
		if err != nil {
			return res, r.stopped(ctx, &res, err)
		}
		r.tally = newRelayTally(base, confirmed)
		if r.expiries, err = e.expiryRecord(ctx, m.RunID); err != nil {
			return res, r.stopped(ctx, &res, err)
		}
	}
	settings, err := e.Target.AddressSettings(ctx, m.Spec.Target.Address)
	if err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	r.targetPolicy = settings.AddressFullPolicy

	r.phase = "staging"
	r.report(ctx, "")
	if err := r.stageAndRelay(ctx); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	r.phase = "finishing"
	r.report(ctx, "")
	if q, err := e.Source.Queue(ctx, QuarantineQueue(m.RunID)); err == nil && q.MessageCount > 0 {
		return res, r.stopped(ctx, &res, fmt.Errorf("%w: %d staged messages could not be converted for AMQP by broker %q and are parked in %s; "+
			"return the run (terraform destroy, or Return) to put them back on %s", errQuarantined, q.MessageCount, e.Source.Name(),
			QuarantineQueue(m.RunID), m.Spec.Source))
	}
	if err := removeStaging(ctx, e.Source, m.RunID); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	r.result(&res)
	return res, nil
}

// relayedBefore is how many messages earlier processes relayed, each once: the count recorded
// before the last batches they sent, plus the messages of those batches that have left staging
// (the target confirmed them; those still staged are relayed, and counted, by this process).
// It also returns the ids of the batches they last confirmed: such a message may be back in
// staging when its acknowledgement was lost, and sending it again is a resend, not a relay.
func (e *Engine) relayedBefore(ctx context.Context, runID string) (int64, []int64, error) {
	recs, err := e.readRecords(ctx, runID)
	if err != nil || recs.InFlight == nil {
		return 0, nil, err
	}
	ids := recs.InFlight.uncounted()
	stillStaged := int64(0)
	for start := 0; start < len(ids); start += inFlightSelectorChunk {
		n, err := e.countStaged(ctx, runID, idSelector(ids[start:min(start+inFlightSelectorChunk, len(ids))]))
		if err != nil {
			return 0, nil, err
		}
		stillStaged += n
	}
	return recs.InFlight.RelayedBefore + int64(len(ids)) - stillStaged, recs.InFlight.Confirmed, nil
}

// readRecords reads every record of a run's manifest queue.
func (e *Engine) readRecords(ctx context.Context, runID string) (runRecords, error) {
	conn, err := connectManagementNode(ctx, e.Source)
	if err != nil {
		return runRecords{}, err
	}
	defer conn.Close()
	return readRecords(ctx, conn, runID, true)
}

// expiryRecord returns the expiries recorded for the last window an earlier process staged,
// by source id; nil when there is none.
func (e *Engine) expiryRecord(ctx context.Context, runID string) (map[int64]int64, error) {
	recs, err := e.readRecords(ctx, runID)
	if err != nil || recs.Expiry == nil {
		return nil, err
	}
	return recs.Expiry.byID(), nil
}

// countStaged counts the staged messages a selector matches by browsing the staging queue: the
// broker's filtered countMessages only examines the first management-browse-page-size (200)
// messages of a queue, which would miss matches deeper down.
func (e *Engine) countStaged(ctx context.Context, runID, selector string) (int64, error) {
	conn, err := connectManagementNode(ctx, e.Source)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	staging := StagingQueue(runID)
	b, err := conn.NewBrowser(ctx, staging+"::"+staging, artemis.BrowserOptions{Credit: 500, Selector: selector, IdleTimeout: manifestReadTimeout})
	if err != nil {
		return 0, fmt.Errorf("run %s: counting staged messages: %w", runID, err)
	}
	defer b.Close(context.WithoutCancel(ctx)) //nolint:errcheck // nothing to settle on a browser
	var n int64
	for i := 0; i < 1_000_000; i++ {
		_, ok, err := b.Next(ctx)
		if err != nil {
			return 0, fmt.Errorf("run %s: counting staged messages: %w", runID, err)
		}
		if !ok {
			break
		}
		n++
	}
	return n, nil
}

// idSelector selects staged messages by their source ids. JMS selectors have no numeric IN, so
// each id is one OR term; callers keep lists to inFlightSelectorChunk ids.
func idSelector(ids []int64) string {
	terms := make([]string, len(ids))
	for i, id := range ids {
		terms[i] = fmt.Sprintf("%s = %d", propOrigMessageID, id)
	}
	return strings.Join(terms, " OR ")
}

// result fills res with what this process did.
func (r *runner) result(res *Result) {
	res.Staged, res.Returned = r.staged.Load(), r.returned
	res.Relayed, res.RelayedTotal, res.Resent = r.tally.counts()
	res.ExpiryKept, res.ExpiryLost = r.expiryKept.Load(), r.expiryLost.Load()
}

// stopped fills res for a run that ends early and says how to continue.
func (r *runner) stopped(ctx context.Context, res *Result, cause error) error {
	r.result(res)
	if errors.Is(cause, errRunBusy) {
		return cause // the other process owns the run; nothing to add
	}
	if errors.Is(cause, errQuarantined) {
		return fmt.Errorf("run %s relayed %d messages and cannot finish: %w", r.m.RunID, res.RelayedTotal, cause)
	}
	// The run's context may be over; a short fresh one reads what is left.
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if q, err := r.source.Queue(readCtx, StagingQueue(r.m.RunID)); err == nil {
		res.Remaining = q.MessageCount
	}
	err := fmt.Errorf("run %s stopped after relaying %d messages; %d remain in staging queue %s on broker %q: nothing is lost, and running the same transfer again resumes it: %w",
		r.m.RunID, res.Relayed, res.Remaining, StagingQueue(r.m.RunID), r.source.Name(), cause)
	if ctx.Err() != nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) ||
		artemis.IsConnectionLost(cause) || errors.Is(cause, artemis.ErrUnreachable) {
		return fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return err
}

func (r *runner) setWaiting(ctx context.Context, why string) {
	r.mu.Lock()
	changed := r.waiting != why
	r.waiting = why
	r.mu.Unlock()
	if changed {
		r.report(ctx, why)
	}
}

// report calls the progress callback.
func (r *runner) report(_ context.Context, waiting string) {
	if r.opts.Progress == nil {
		return
	}
	if waiting == "" {
		r.mu.Lock()
		waiting = r.waiting
		r.mu.Unlock()
	}
	staged := r.staged.Load()
	relayed, _, _ := r.tally.counts()
	elapsed := time.Since(r.started)
	rate := 0.0
	if secs := elapsed.Seconds(); secs > 0 {
		rate = float64(relayed) / secs
	}
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	r.opts.Progress(Progress{RunID: r.m.RunID, Phase: r.phase, Staged: staged, Relayed: relayed,
		Returned: r.returned, Remaining: max(staged-relayed, 0), Rate: rate, Waiting: waiting, Elapsed: elapsed})
}

// Return puts everything still staged back on the run's source queue, broker-side, and removes
// staging. It refuses while a relay holds the staging queue. The messages of the batch that was
// in flight when the run stopped may already be on the target; those are relayed (and dropped
// by the target's duplicate detection if it has them) rather than returned, so no message ends
// up on both brokers.
func (e *Engine) Return(ctx context.Context, runID string) (Result, error) {
	if _, err := e.Source.Queue(ctx, StagingQueue(runID)); err != nil {
		return Result{}, fmt.Errorf("returning run %s: %w", runID, err)
	}
	conn, err := connectManagementNode(ctx, e.Source)
	if err != nil {
		return Result{}, err
	}
	recs, err := readRecords(ctx, conn, runID, true)
	_ = conn.Close()
	if err != nil {
		return Result{}, err
	}
	return e.returnStaged(ctx, *recs.Manifest, recs.InFlight, recs.Expiry)
}

// ReturnWithoutManifest returns a run whose manifest is gone to the queue its staged messages
// came from (sourceQueue, as recorded on each message by the staging move). With no manifest
// there is no in-flight record either, so the messages of a batch that was in flight when the
// run died may end up on both brokers; Return is the better path whenever the manifest exists.
func (e *Engine) ReturnWithoutManifest(ctx context.Context, runID, sourceQueue string) (Result, error) {
	m := Manifest{RunID: runID, Spec: Spec{Mode: ModeMove, Source: Endpoint{Broker: e.Source.Name(), Queue: sourceQueue}}}
	return e.returnStaged(ctx, m, nil, nil)
}

// inFlightSelectorChunk bounds the ids in one selector, and keeps a filtered count of them
// below the broker's cap of 200.
const inFlightSelectorChunk = 100

func (e *Engine) returnStaged(ctx context.Context, m Manifest, inFlight *inFlightRecord, expiry *expiryRecord) (Result, error) {
	r := &runner{source: e.Source, target: e.Target, opts: e.Options.withDefaults(), m: m, started: time.Now(), phase: "returning",
		tally: newRelayTally(0, nil)}
	if expiry != nil {
		// The in-flight messages relayed below keep their expiry; those moved back to the
		// source lose it, as any broker-side move does.
		r.expiries = expiry.byID()
	}
	res := Result{RunID: m.RunID, T0: m.T0}
	staging := StagingQueue(m.RunID)
	q, err := e.Source.Queue(ctx, staging)
	if err != nil {
		return res, fmt.Errorf("returning run %s: %w", m.RunID, err)
	}
	// As for a relay, a consumer of a process that just died is given a moment to go away.
	for deadline := time.Now().Add(busyGrace); q.ConsumerCount > 0 && time.Now().Before(deadline); {
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return res, err
		}
		if q, err = e.Source.Queue(ctx, staging); err != nil {
			return res, fmt.Errorf("returning run %s: %w", m.RunID, err)
		}
	}
	if q.ConsumerCount > 0 {
		return res, fmt.Errorf("returning run %s: %w; stop it first", m.RunID, errRunBusy)
	}
	if q.MessageCount == 0 && m.Spec.Source.Queue == "" {
		// Nothing staged and nowhere known to return to: only staging to remove.
		return res, removeStaging(ctx, e.Source, m.RunID)
	}
	if _, err := e.Source.Queue(ctx, m.Spec.Source.Queue); err != nil {
		return res, fmt.Errorf("returning run %s to its source queue: %w", m.RunID, err)
	}
	if err := e.returnQuarantined(ctx, r, m); err != nil {
		return res, r.stopped(ctx, &res, err)
	}
	if inFlight != nil && len(inFlight.SourceIDs) > 0 && q.MessageCount > 0 {
		if err := e.settleInFlight(ctx, r, inFlight.SourceIDs); err != nil {
			return res, r.stopped(ctx, &res, err)
		}
		res.Relayed, _, res.Resent = r.tally.counts()
	}
	for {
		if err := ctx.Err(); err != nil {
			return res, r.stopped(ctx, &res, err)
		}
		// rejectDuplicates false: the broker would otherwise delete a message whose duplicate
		// id the source address has seen, instead of returning it.
		n, err := e.Source.MoveMessages(ctx, artemis.MoveRequest{Queue: staging, TargetQueue: m.Spec.Source.Queue,
			RejectDuplicates: false, Count: r.opts.ChunkSize})
		if err != nil {
			return res, r.stopped(ctx, &res, fmt.Errorf("returning run %s: %w", m.RunID, err))
		}
		r.returned += int64(n)
		r.report(ctx, "")
		if n < r.opts.ChunkSize {
			break
		}
	}
	res.Returned = r.returned
	if err := removeStaging(ctx, e.Source, m.RunID); err != nil {
		return res, err
	}
	return res, nil
}

// returnQuarantined puts the messages the broker could not convert for the relay back on the
// source. Artemis (seen on 2.40) dead-letters a copy of such a message into quarantine but leaves
// the original in staging, uncounted by MessageCount: the original goes back if staging still
// has it, else the quarantined copy does; never both. The quarantine queue then holds only
// duplicates and is removed.
func (e *Engine) returnQuarantined(ctx context.Context, r *runner, m Manifest) error {
	quarantine := QuarantineQueue(m.RunID)
	if _, err := e.Source.Queue(ctx, quarantine); errors.Is(err, artemis.ErrNotFound) {
		return nil
	}
	duplicates := map[int64]bool{} // quarantined copies whose original went back from staging
	paged := 0
	for round := 0; round < 10_000; round++ { // each round lists at most the broker's page of 200
		msgs, err := e.Source.ListMessages(ctx, quarantine, "")
		if err != nil {
			return fmt.Errorf("returning the quarantined messages of run %s: %w", m.RunID, err)
		}
		handled := 0
		paged = 0
		for _, msg := range msgs {
			id, copyOf := jsonInt(msg["messageID"]), jsonInt(msg[propOrigMessageID])
			if id == 0 || duplicates[id] {
				continue
			}
			if copyOf != 0 {
				back, err := e.Source.MoveMessage(ctx, StagingQueue(m.RunID), copyOf, m.Spec.Source.Queue)
				if err != nil {
					return err
				}
				if back {
					duplicates[id] = true
					r.returned++
					handled++
					continue
				}
			}
			moved, err := e.Source.MoveMessage(ctx, quarantine, id, m.Spec.Source.Queue)
			if err != nil {
				return err
			}
			if !moved {
				paged++ // by-id moves do not see paged messages
				continue
			}
			r.returned++
			handled++
		}
		if handled == 0 {
			break
		}
	}
	if paged > 0 {
		if len(duplicates) > 0 {
			return fmt.Errorf("run %s: %d quarantined messages are paged and %d others are duplicates of returned ones; move the paged ones from %s to %s by hand",
				m.RunID, paged, len(duplicates), quarantine, m.Spec.Source.Queue)
		}
		for {
			n, err := e.Source.MoveMessages(ctx, artemis.MoveRequest{Queue: quarantine, TargetQueue: m.Spec.Source.Queue, Count: r.opts.ChunkSize})
			if err != nil {
				return fmt.Errorf("returning the quarantined messages of run %s: %w", m.RunID, err)
			}
			r.returned += int64(n)
			if n < r.opts.ChunkSize {
				break
			}
		}
	}
	// Only the duplicates are left.
	if err := e.Source.DestroyQueue(ctx, quarantine); err != nil && !errors.Is(err, artemis.ErrNotFound) {
		return fmt.Errorf("removing the quarantine of run %s: %w", m.RunID, err)
	}
	return nil
}

// jsonInt reads a whole number from a decoded JSON value.
func jsonInt(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case string:
		var i int64
		_, _ = fmt.Sscan(n, &i)
		return i
	}
	return 0
}

// settleInFlight relays the staged messages of the last in-flight batch to the target.
func (e *Engine) settleInFlight(ctx context.Context, r *runner, ids []int64) error {
	if e.Target == nil {
		return fmt.Errorf("run %s: %d messages were in flight to the target when the run stopped; returning them needs the target broker too",
			r.m.RunID, len(ids))
	}
	settings, err := e.Target.AddressSettings(ctx, r.m.Spec.Target.Address)
	if err != nil {
		return err
	}
	r.targetPolicy = settings.AddressFullPolicy
	for start := 0; start < len(ids); start += inFlightSelectorChunk {
		r.selector = idSelector(ids[start:min(start+inFlightSelectorChunk, len(ids))])
		if err := r.relay(ctx, func() bool { return true }); err != nil {
			return err
		}
	}
	r.selector = ""
	return nil
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
