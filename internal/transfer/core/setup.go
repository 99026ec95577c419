package core

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Setup is what every run works with: the two brokers, the options, the hooks and the ledger.
type Setup struct {
	Source, Target *artemis.Client
	Options        Options
	// Hooks stop a run at precise points, for tests; the zero value in production.
	Hooks Hooks
	// Bookkeeper, when set, records each run in the transfer ledger and fences it to one
	// process at a time (OpenBook). Nil: no ledger.
	Bookkeeper Bookkeeper
	// DuplicateProbes, when set, shares the target's duplicate-detection canary with the other
	// engines of the process that hold it. Nil: every check sends its own.
	DuplicateProbes *DuplicateProbes
	// StagingProbes, when set, shares a move's staging canary on the source with the other
	// engines of the process that hold it. Nil: every check of a move makes its own.
	StagingProbes *StagingProbes
	// PassedChecks, when set, lets a run that starts or resumes right after a full preflight of
	// the same transfer in this process skip its own. Nil: every run checks.
	PassedChecks *PassedChecks
	// Graces bound the waits for what shows only with time; the zero value: the defaults.
	Graces Graces
}

// Graces bound the engine's waits for what shows only with time: a process that may be creating
// a run it has not yet marked as its own, a consumer of a process that just died that the broker
// has not yet dropped. A zero field takes its default. Tests that cause the event themselves (a
// child process they killed) shorten them, so that they wait for that event, not for the clock.
type Graces struct {
	// Start is how long after its t0 a run without a manifest may still be being created by a
	// live process that does not show yet: between t0 and its lease on the manifest queue, a
	// process writes the ledger row and creates that queue, a second or two on a busy broker.
	// It bounds how long the next apply after a kill in a run's first instants waits before
	// taking the run over. Default 15 s.
	Start time.Duration
	// Busy is how long a consumer refused by a run's queue (which admits one) is retried, and
	// how long a return waits for a staging consumer to go: long enough for the broker to drop
	// the consumer of a process that just died. Default 10 s.
	Busy time.Duration
	// RecordRead is how long a read of a move's records (its manifest queue) first waits for a
	// record the queue counts; each of the later tries waits twice as long as the one before.
	// Default 1.5 s.
	RecordRead time.Duration
	// Credit is how long a send of a run's own bookkeeping (a move's records, the target's
	// duplicate-detection canary) waits for a broker that grants no credit (its disk above
	// max-disk-usage, a full address that blocks producers) before the work stops saying so.
	// Nothing is lost by stopping: the record comes before what it describes. Default 10 min.
	Credit time.Duration
	// Arrival is how long the proof of a run's first delivery (DeliverFirst) waits for the
	// target queue's count of messages added to rise once the broker confirmed the message:
	// the broker confirms once the message is stored and routed, and its queue counts the
	// message a moment later, when the queue's own executor takes it in. Default 5 s.
	Arrival time.Duration
	// LateMove is how long after a staging move was sent it may still land: Artemis runs a move
	// once it has its broker-wide management lock, which it waits a minute for, and a chunk's
	// move takes seconds. A return that takes over a run whose earlier process was staging
	// waits this long (from that process's last staging record) before it changes staging.
	// Default 75 s.
	LateMove time.Duration
	// Confirm is how long a relay or copy waits for the target to confirm a message it sent, or
	// to grant the credit to send one, before it takes the target as gone and stops resumable.
	// A broker compacting its journal or paging takes seconds to answer; one that answers
	// nothing for minutes is stuck. Default 5 min, the default retry budget.
	Confirm time.Duration
}

// The defaults of Graces.
const (
	defaultStartGrace = 15 * time.Second
	defaultBusyGrace  = 10 * time.Second
	defaultRecordRead = 1500 * time.Millisecond
	defaultCredit     = 10 * time.Minute
	defaultArrival    = 5 * time.Second
	defaultLateMove   = 75 * time.Second
	defaultConfirm    = 5 * time.Minute
)

// WithDefaults returns g with every zero field set to its default.
func (g Graces) WithDefaults() Graces {
	return Graces{Start: cmp.Or(g.Start, defaultStartGrace), Busy: cmp.Or(g.Busy, defaultBusyGrace), RecordRead: cmp.Or(g.RecordRead, defaultRecordRead),
		Credit: cmp.Or(g.Credit, defaultCredit), Arrival: cmp.Or(g.Arrival, defaultArrival),
		LateMove: cmp.Or(g.LateMove, defaultLateMove), Confirm: cmp.Or(g.Confirm, defaultConfirm)}
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
	// StagingDepthRead runs before each read of the staging queue's depth that decides whether
	// staging waits for the relay.
	StagingDepthRead func()
	// BrowseIdle runs when a read of a run's records ended by waiting out the browse's idle
	// timeout rather than at the count of records it expected: a resume that waits one out
	// starts that much later.
	BrowseIdle func()
	// HeapPaused runs each time the heap guard has reported a pause, before it waits
	// (WaitForTargetHeap).
	HeapPaused func()
	// Reached runs at each named instant of a move's start and end (the Point constants).
	Reached func(Point)
}

// NewWorker starts work on run m in this process.
func (e *Setup) NewWorker(m Run, h Hooks, phase Phase) *Worker {
	opts := e.Options.WithDefaults()
	return &Worker{Source: e.Source, Target: e.Target, Opts: opts, Graces: e.Graces.WithDefaults(), Run: m, Hooks: h,
		Progress: NewTracker(m.RunID, phase, opts.Progress), pace: newPacer(opts.MaxMessagesPerSecond)}
}

// ResolveAddresses fills in the source and target addresses from the brokers.
func (e *Setup) ResolveAddresses(ctx context.Context, spec *Spec) error {
	if err := resolveAddress(ctx, e.Source, "source", &spec.Source); err != nil {
		return err
	}
	return resolveAddress(ctx, e.Target, "target", &spec.Target)
}

// resolveAddress fills in the address of endpoint ep (the source or target, as side says) from
// its broker c, and refuses an address the spec gives that the queue is not on.
func resolveAddress(ctx context.Context, c *artemis.Client, side string, ep *Endpoint) error {
	q, err := c.Queue(ctx, ep.Queue)
	if err != nil {
		return fmt.Errorf("%s queue: %w", side, err)
	}
	if ep.Address != "" && ep.Address != q.Address {
		return fmt.Errorf("%s queue %s is on address %q, not %q", side, *ep, q.Address, ep.Address)
	}
	ep.Address = q.Address
	return nil
}

// NewRun describes a new run of spec, move or copy, starting now: its id and t0, the queues'
// addresses and the nodes it is pinned to, as the brokers give them. It also returns the
// source broker's facts (a move creates its staging queues by its version).
func (e *Setup) NewRun(ctx context.Context, spec Spec) (Run, artemis.BrokerInfo, error) {
	srcInfo, err := e.Source.BrokerInfo(ctx)
	if err != nil {
		return Run{}, srcInfo, err
	}
	tgtInfo, err := e.Target.BrokerInfo(ctx)
	if err != nil {
		return Run{}, srcInfo, err
	}
	if err := e.ResolveAddresses(ctx, &spec); err != nil {
		return Run{}, srcInfo, err
	}
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	return Run{RunID: NewRunID(spec, t0), T0: t0, Spec: spec, SourceNodeID: srcInfo.NodeID, TargetNodeID: tgtInfo.NodeID}, srcInfo, nil
}
