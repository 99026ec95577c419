package move

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// leaseSelector matches no message: the lease receiver exists only to be counted.
const leaseSelector = "studio_lease = 'held'"

// runLease is this process's hold on a run on the source broker: a receiver that takes no
// message, attached to the run's manifest queue, which admits one consumer. Nothing on the
// broker enforces it on a management call (moveMessages and destroyQueue take no owner), so
// the process checks it holds the lease before each call that changes the run's queues (fence).
type runLease struct {
	source *artemis.Client
	runID  string
	nodeID string
	conn   *artemis.Connection
	rcv    *artemis.Receiver
}

// holdLease attaches a receiver that takes no message to the run's manifest queue for as long
// as this process works on the run (stages, relays, returns or removes it). The queue admits
// one consumer, so the lease is exclusive: a second process is refused, relay or return, with
// or without a ledger; and a consumer there says the run is alive, so it is not reported as
// orphaned. It dies with the process; a refusal is retried for the busy grace, the time the broker
// takes to drop the consumer of a process that just died.
func (e *Mover) holdLease(ctx context.Context, runID, nodeID string) (*runLease, error) {
	l := &runLease{source: e.setup.Source, runID: runID, nodeID: nodeID}
	if err := l.attach(ctx, e.setup.Graces.WithDefaults().Busy); err != nil {
		return nil, err
	}
	return l, nil
}

// attach opens the lease's connection and receiver, retrying a refusal for wait. The manifest
// queue must be the run's before and after: a receiver attached to a queue that is gone makes
// the broker create an ordinary queue by that name (when the user may), which admits any number
// of consumers, so a lease there would not be exclusive (manifestQueueIsTheRuns).
func (l *runLease) attach(ctx context.Context, wait time.Duration) error {
	if err := l.manifestQueueIsTheRuns(ctx); err != nil {
		return err
	}
	conn, err := core.ConnectRunNode(ctx, l.source, l.runID, "source", l.nodeID)
	if err != nil {
		return err
	}
	var rcv *artemis.Receiver
	for deadline := time.Now().Add(wait); ; {
		rcv, err = conn.NewReceiver(ctx, manifestFQQN(l.runID), artemis.ReceiverOptions{Credit: 1, Selector: leaseSelector})
		if err == nil || !isMaxConsumers(err) || time.Now().After(deadline) {
			break
		}
		if err := core.Sleep(ctx, 500*time.Millisecond); err != nil {
			_ = conn.Close()
			return err
		}
	}
	if err != nil {
		_ = conn.Close()
		if isMaxConsumers(err) {
			return fmt.Errorf("run %s: %w (another process holds the run's lease, the one consumer of %s)", l.runID, core.ErrRunBusy, ManifestQueue(l.runID))
		}
		return fmt.Errorf("run %s: taking the run's lease: %w", l.runID, err)
	}
	// The queue may have been removed between the check and the attach.
	if err := l.manifestQueueIsTheRuns(ctx); err != nil {
		_ = conn.Close()
		return err
	}
	l.conn, l.rcv = conn, rcv
	return nil
}

// manifestQueueIsTheRuns checks that the run's manifest queue exists and has the shape a run
// gives it (manifestQueueSpec): one consumer at most, last-value, durable.
func (l *runLease) manifestQueueIsTheRuns(ctx context.Context) error {
	q, err := l.source.Queue(ctx, ManifestQueue(l.runID))
	if errors.Is(err, artemis.ErrNotFound) {
		return l.lost(errors.New("its manifest queue is gone (another process finished, returned or discarded the run)"))
	}
	if err != nil {
		return fmt.Errorf("run %s: checking the run's manifest queue: %w", l.runID, err)
	}
	if q.MaxConsumers != 1 || !q.IsLastValue() || !q.Durable {
		return l.lost(fmt.Errorf("queue %s is not the run's manifest queue (max-consumers %d, last-value %v, durable %v): the broker created it "+
			"for a client that attached to it after the run's was removed; remove that queue once nothing uses it", q.Name, q.MaxConsumers, q.IsLastValue(), q.Durable))
	}
	return nil
}

// release gives the lease up; the broker frees the queue's one consumer at once.
func (l *runLease) release() {
	if l != nil && l.conn != nil {
		_ = l.conn.Close()
	}
}

// fence checks, with a round trip to the source broker, that this process still holds the run's
// lease, before a call that changes the run's queues. A process paused for longer than the
// broker keeps a silent connection (a stopped container, a long GC pause, a suspended laptop)
// finds its lease gone, and another process may hold it and work on the run by now: it stops
// instead of moving or deleting that process's messages. A lease lost with its connection (the
// broker restarted, the network cut) is taken again when no other process took it meanwhile and
// the run's manifest queue is still there; the check and the call are two requests, so a pause
// between them is not covered (Artemis has no management call conditional on a consumer).
func (l *runLease) fence(ctx context.Context) error {
	if l == nil {
		return nil
	}
	err := l.rcv.StillAttached(ctx)
	if err == nil {
		return nil
	}
	if !core.IsConnectionCause(err) {
		return l.lost(err)
	}
	if _, qErr := l.source.Queue(ctx, ManifestQueue(l.runID)); qErr != nil {
		if errors.Is(qErr, artemis.ErrNotFound) {
			return l.lost(fmt.Errorf("%w; its manifest queue is gone (another process finished or returned the run)", err))
		}
		return fmt.Errorf("run %s: checking the run's lease: %w", l.runID, qErr)
	}
	_ = l.conn.Close()
	if attachErr := l.attach(ctx, 0); attachErr != nil {
		if errors.Is(attachErr, core.ErrRunBusy) {
			return l.lost(attachErr)
		}
		return attachErr
	}
	return nil
}

// lost is the error of a lease this process no longer holds.
func (l *runLease) lost(cause error) error {
	return fmt.Errorf("run %s: %w, the one consumer of %s; this process stopped before changing the run's queues: %w",
		l.runID, core.ErrLeaseLost, ManifestQueue(l.runID), cause)
}
