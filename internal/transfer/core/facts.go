package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// ReadFacts reads what the refusal rules of every transfer, move or copy, need of both brokers:
// their versions and the nodes their URLs reach, both queues, and the target address's
// settings, diverts and usage, with the target's send and duplicate-detection probes when the
// plan may write. moreSource, when not nil, reads more of the source once its queue is known.
//
// The two brokers are read at the same time, each in its own goroutine on its own client: a
// plan, and a resume's check before it relays, wait for the slower broker rather than for both
// one after the other (each is a chain of round trips, and the canaries write to the brokers'
// journals). Each side fills only its own fields; the target's problems are listed first.
func (e *Setup) ReadFacts(ctx context.Context, spec Spec, writes bool, moreSource func(context.Context, *preflight.Facts) error) (preflight.Facts, error) {
	opts := e.Options.WithDefaults()
	f := preflight.Facts{
		Source:        preflight.Endpoint{Broker: spec.Source.Broker, Queue: spec.Source.Queue},
		Target:        preflight.Endpoint{Broker: spec.Target.Broker, Queue: spec.Target.Queue},
		SelectionKind: spec.Selection.Kind(), SelectionCount: -1, InFlightWindow: opts.BatchSize,
		ExpiringMessages: -1, ScheduledMessages: -1, ExpiryPreserved: true,
	}
	var target preflight.Facts
	targetErr := make(chan error, 1)
	go func() { targetErr <- e.readTargetFacts(ctx, spec, writes, &target) }()
	sourceErr := e.readSourceFacts(ctx, spec, &f, moreSource)
	// Both sides end before this returns, whichever failed: neither outlives the call.
	if err := <-targetErr; sourceErr == nil && err != nil {
		return f, err
	}
	if sourceErr != nil {
		return f, sourceErr
	}
	f.TargetBroker, f.TargetURLNodes, f.TargetQueue = target.TargetBroker, target.TargetURLNodes, target.TargetQueue
	f.TargetSettings, f.TargetDiverts, f.TargetUsage = target.TargetSettings, target.TargetDiverts, target.TargetUsage
	f.DuplicateDetection = target.DuplicateDetection
	f.TargetMemory = target.TargetMemory
	f.TargetRelays = target.TargetRelays
	f.PermissionProblems = append(target.PermissionProblems, f.PermissionProblems...)
	f.ConnectionProblems = append(target.ConnectionProblems, f.ConnectionProblems...)
	if !writes {
		f.SkippedWriteChecks = append(f.SkippedWriteChecks,
			fmt.Sprintf("that the user of broker %q may send to the target queue", e.Target.Name()),
			fmt.Sprintf("that broker %q discards a repeated duplicate id sent over AMQP", e.Target.Name()))
		f.DuplicateDetection = preflight.DuplicateProbe{Outcome: preflight.DedupSkipped}
	}
	return f, nil
}

// readSourceFacts is ReadFacts' source side.
func (e *Setup) readSourceFacts(ctx context.Context, spec Spec, f *preflight.Facts, more func(context.Context, *preflight.Facts) error) error {
	var err error
	if f.SourceBroker, err = e.Source.BrokerInfo(ctx); err != nil {
		return err
	}
	// Which node each AMQP URL reaches: a run uses only the URLs of the management node.
	f.SourceURLNodes = e.Source.ProbeNodes(ctx)
	if f.SourceQueue, err = optionalQueue(ctx, e.Source, spec.Source.Queue); err != nil {
		return err
	}
	if more == nil {
		return nil
	}
	return more(ctx, f)
}

// readTargetFacts is ReadFacts' target side; it fills f's target fields and problems.
func (e *Setup) readTargetFacts(ctx context.Context, spec Spec, writes bool, f *preflight.Facts) error {
	var err error
	if f.TargetBroker, err = e.Target.BrokerInfo(ctx); err != nil {
		return err
	}
	f.TargetURLNodes = e.Target.ProbeNodes(ctx)
	if f.TargetQueue, err = optionalQueue(ctx, e.Target, spec.Target.Queue); err != nil || f.TargetQueue == nil {
		return err
	}
	if f.TargetSettings, err = e.Target.AddressSettings(ctx, f.TargetQueue.Address); err != nil {
		return err
	}
	// An exclusive divert takes messages off the address even when they name the queue.
	if f.TargetDiverts, err = e.Target.Diverts(ctx, f.TargetQueue.Address); err != nil {
		return err
	}
	if usage, err := e.Target.AddressUsage(ctx, f.TargetQueue.Address); err == nil {
		f.TargetUsage = &usage
	}
	// The shared-cache rule counts only this run when the producers cannot be listed (a role
	// without listProducersInfoAsJSON).
	if producers, err := e.Target.QueueProducers(ctx, f.TargetQueue.Address, f.TargetQueue.Name); err == nil {
		f.TargetRelays = targetRelays(producers, f.TargetQueue.FQQN())
	}
	// The heap rule is left out when the heap cannot be read (a role without get* on java.lang).
	if heap, err := e.Target.Heap(ctx); err == nil {
		if global, err := e.Target.GlobalMemory(ctx); err == nil {
			f.TargetMemory = &preflight.TargetMemory{Heap: heap, Global: global}
		}
	}
	if writes {
		f.PermissionProblems = append(f.PermissionProblems, e.probeTargetSend(ctx, f.TargetQueue.FQQN(), f)...)
		// One canary answers for every transfer of this process to the target broker and a
		// queue of the target queue's routing type.
		routing, err := routingOf(f.TargetQueue.RoutingType)
		if err != nil {
			return fmt.Errorf("target queue %s: %w", spec.Target, err)
		}
		f.DuplicateDetection = e.duplicateDetection(ctx, f.TargetBroker.NodeID, routing)
	}
	return nil
}

func optionalQueue(ctx context.Context, c *artemis.Client, name string) (*artemis.QueueInfo, error) {
	q, err := c.Queue(ctx, name)
	if errors.Is(err, artemis.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &q, nil
}

// idsPerCount is how many message ids one count of an id selection names.
const idsPerCount = 100

// browsePageSize is the broker's default management-browse-page-size: a filtered count
// examines only that many messages from the head of the queue.
const browsePageSize = 200

// CountSelection estimates the selection's size now, and how many selected messages carry an
// expiry, into f. A count the broker refuses is a permission problem in f, not an error: the
// refusal rules refuse it, and a run's progress takes the size as unknown. The broker's filtered
// counts look only at the head of the queue, so on a deeper queue they are lower bounds.
func (e *Setup) CountSelection(ctx context.Context, spec Spec, f *preflight.Facts) error {
	err := e.countSelection(ctx, spec, f)
	if errors.Is(err, artemis.ErrForbidden) {
		f.PermissionProblems = append(f.PermissionProblems, preflight.PermissionProblem{Broker: e.Source.Name(),
			What: "count the messages of " + spec.Source.Queue, Attribute: "source.broker", Detail: err.Error()})
		return nil
	}
	return err
}

func (e *Setup) countSelection(ctx context.Context, spec Spec, f *preflight.Facts) error {
	sel := spec.Selection
	switch {
	case len(sel.MessageIDs) > 0:
		// Exact counts need lists short enough to stay under the cap; long lists are an upper bound.
		if len(sel.MessageIDs) > 20*idsPerCount {
			f.SelectionCount, f.SelectionCountUpperBound = int64(len(sel.MessageIDs)), true
			return nil
		}
		var n int64
		ids := Selection{MessageIDs: sel.MessageIDs}
		for start := 0; start < len(sel.MessageIDs); start += idsPerCount {
			chunk := Selection{MessageIDs: ids.MessageIDs[start:min(start+idsPerCount, len(ids.MessageIDs))]}
			c, err := e.Source.CountMessages(ctx, spec.Source.Queue, chunk.StageFilters(time.Time{})[0])
			if err != nil {
				return err
			}
			n += c
		}
		// The broker's filtered count examines only the first 200 messages of the queue.
		f.SelectionCount, f.SelectionCountCapped = n, f.SourceQueue.MessageCount > browsePageSize
	case sel.Filter != "":
		n, err := e.Source.CountMessages(ctx, spec.Source.Queue, sel.Filter)
		if err != nil {
			if msg, ok := filterError(err); ok {
				f.FilterError = msg
				return nil
			}
			return err
		}
		f.SelectionCount, f.SelectionCountCapped = n, f.SourceQueue.MessageCount > browsePageSize
	default:
		f.SelectionCount = f.SourceQueue.MessageCount
	}
	expiring := "AMQExpiration > 0"
	if sel.Filter != "" {
		expiring = "(" + sel.Filter + ") AND " + expiring
	}
	if len(sel.MessageIDs) == 0 {
		if n, err := e.Source.CountMessages(ctx, spec.Source.Queue, expiring); err == nil {
			f.ExpiringMessages = n
		}
	}
	return nil
}

// filterError returns the broker's words when err is its refusal of a filter expression.
func filterError(err error) (string, bool) {
	var fe *artemis.FilterError
	if errors.As(err, &fe) {
		return fe.Reason, true
	}
	return "", false
}

// probeTargetSend attaches (and detaches) a sender to the target queue: the broker checks the
// send permission at attach, so nothing needs to be sent.
func (e *Setup) probeTargetSend(ctx context.Context, fqqn string, f *preflight.Facts) []preflight.PermissionProblem {
	conn, err := ConnectManagementNode(ctx, e.Target)
	if err != nil {
		f.ConnectionProblems = append(f.ConnectionProblems, preflight.ConnectionProblem{Broker: e.Target.Name(), Attribute: "target.broker", Detail: err.Error()})
		return nil
	}
	defer conn.Close()
	s, err := conn.NewSender(ctx, fqqn, artemis.SenderOptions{MaxInFlight: 1})
	if err != nil {
		return []preflight.PermissionProblem{{Broker: e.Target.Name(), What: "send to " + fqqn, Attribute: "target.queue", Detail: err.Error()}}
	}
	_ = s.Close(ctx)
	return nil
}

// CanaryName names a throw-away queue under the staging prefix (covered by the same
// permissions) that is never taken for a run: it is not a run id.
func CanaryName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return StagingPrefix + "canary-" + hex.EncodeToString(b)
}

// targetRelays picks, of the target broker's producers, the relays of this provider's runs that
// send to fqqn: the target keeps a duplicate-id cache per address string a sender names, so
// only those share this run's cache.
func targetRelays(producers []artemis.Producer, fqqn string) []preflight.TargetRelay {
	var out []preflight.TargetRelay
	for _, p := range producers {
		if p.Destination != fqqn {
			continue
		}
		if runID, batch, ok := ParseRelayLinkName(p.Name); ok {
			out = append(out, preflight.TargetRelay{RunID: runID, Batch: batch})
		}
	}
	return out
}
