package transfer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// Preflight reads what the refusal rules need from both brokers and applies them. Nothing is
// moved: the only writes are two short-lived canary queues (studio.transfer.canary-*), which
// prove that the user may create and consume staging queues on the source and that the target
// discards a repeated duplicate id.
func (e *Engine) Preflight(ctx context.Context, spec Spec) ([]preflight.Finding, error) {
	return e.preflight(ctx, spec, true)
}

// PreflightWithoutWrites is Preflight for a reviewer whose broker user may only read and browse:
// the checks that need writes (the two canaries and the target send permission) are skipped, and
// a warning says so. A run always makes every check before it moves anything.
func (e *Engine) PreflightWithoutWrites(ctx context.Context, spec Spec) ([]preflight.Finding, error) {
	return e.preflight(ctx, spec, false)
}

func (e *Engine) preflight(ctx context.Context, spec Spec, writes bool) ([]preflight.Finding, error) {
	opts := e.Options.withDefaults()
	f := preflight.Facts{
		Source:        preflight.Endpoint{Broker: spec.Source.Broker, Queue: spec.Source.Queue},
		Target:        preflight.Endpoint{Broker: spec.Target.Broker, Queue: spec.Target.Queue},
		SelectionKind: spec.Selection.Kind(), SelectionCount: -1, InFlightWindow: opts.BatchSize,
		ExpiringMessages: -1, ScheduledMessages: -1, ExpiryPreserved: true,
	}
	var err error
	if f.SourceBroker, err = e.Source.BrokerInfo(ctx); err != nil {
		return nil, err
	}
	if f.TargetBroker, err = e.Target.BrokerInfo(ctx); err != nil {
		return nil, err
	}
	// Which node each AMQP URL reaches: a run uses only the URLs of the management node.
	f.SourceURLNodes, f.TargetURLNodes = e.Source.ProbeNodes(ctx), e.Target.ProbeNodes(ctx)
	if f.SourceQueue, err = optionalQueue(ctx, e.Source, spec.Source.Queue); err != nil {
		return nil, err
	}
	if f.TargetQueue, err = optionalQueue(ctx, e.Target, spec.Target.Queue); err != nil {
		return nil, err
	}
	if f.TargetQueue != nil {
		if f.TargetSettings, err = e.Target.AddressSettings(ctx, f.TargetQueue.Address); err != nil {
			return nil, err
		}
		// An exclusive divert takes messages off the address even when they name the queue.
		if f.TargetDiverts, err = e.Target.Diverts(ctx, f.TargetQueue.Address); err != nil {
			return nil, err
		}
		if usage, err := e.Target.AddressUsage(ctx, f.TargetQueue.Address); err == nil {
			f.TargetUsage = &usage
		}
		if writes {
			f.PermissionProblems = append(f.PermissionProblems, e.probeTargetSend(ctx, f.TargetQueue.FQQN(), &f)...)
			f.DuplicateDetection = e.probeDuplicateDetection(ctx)
		}
	}
	if f.SourceQueue != nil {
		f.ScheduledMessages = f.SourceQueue.ScheduledCount
		if err := e.countSelection(ctx, spec, &f); errors.Is(err, artemis.ErrForbidden) {
			f.PermissionProblems = append(f.PermissionProblems, preflight.PermissionProblem{Broker: e.Source.Name(),
				What: "count the messages of " + spec.Source.Queue, Attribute: "source.broker", Detail: err.Error()})
		} else if err != nil {
			return nil, err
		}
	}
	if writes {
		f.PermissionProblems = append(f.PermissionProblems, e.probeStaging(ctx, &f)...)
	} else {
		f.SkippedWriteChecks = []string{
			fmt.Sprintf("that the user of broker %q may create, consume from and remove a staging queue (%s*)", e.Source.Name(), StagingPrefix),
			fmt.Sprintf("that the user of broker %q may send to %s", e.Target.Name(), spec.Target.Queue),
			fmt.Sprintf("that broker %q discards a repeated duplicate id sent over AMQP", e.Target.Name()),
		}
		f.DuplicateDetection = preflight.DuplicateProbe{Outcome: preflight.DedupSkipped}
	}
	runs, err := e.UnfinishedRuns(ctx, &spec)
	if err != nil {
		return nil, err
	}
	if len(runs) > 0 {
		f.UnfinishedRun = &preflight.UnfinishedRun{RunID: runs[0].RunID, Staged: runs[0].Messages, T0: runs[0].T0}
	}
	return preflight.Check(f), nil
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

// browsePageSize is the broker's default management-browse-page-size: a filtered count
// examines only that many messages from the head of the queue.
const browsePageSize = 200

// countSelection estimates the selection's size now, and how many selected messages carry an
// expiry. The broker's filtered counts look only at the head of the queue, so on a deeper queue
// they are lower bounds.
func (e *Engine) countSelection(ctx context.Context, spec Spec, f *preflight.Facts) error {
	sel := spec.Selection
	switch {
	case len(sel.MessageIDs) > 0:
		// Exact counts need lists short enough to stay under the cap; long lists are an upper bound.
		if len(sel.MessageIDs) > 20*inFlightSelectorChunk {
			f.SelectionCount = int64(len(sel.MessageIDs))
			return nil
		}
		var n int64
		ids := Selection{MessageIDs: sel.MessageIDs}
		for start := 0; start < len(sel.MessageIDs); start += inFlightSelectorChunk {
			chunk := Selection{MessageIDs: ids.MessageIDs[start:min(start+inFlightSelectorChunk, len(ids.MessageIDs))]}
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

// filterError recognises the broker's refusal of a filter expression and returns its message.
func filterError(err error) (string, bool) {
	text := err.Error()
	for _, marker := range []string{"AMQ229020", "Invalid filter", "FilterException", "ParseException"} {
		if i := strings.Index(text, marker); i >= 0 {
			return text[i:], true
		}
	}
	return "", false
}

// probeTargetSend attaches (and detaches) a sender to the target queue: the broker checks the
// send permission at attach, so nothing needs to be sent.
func (e *Engine) probeTargetSend(ctx context.Context, fqqn string, f *preflight.Facts) []preflight.PermissionProblem {
	conn, err := connectManagementNode(ctx, e.Target)
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

// canaryName names a throw-away queue under the staging prefix (covered by the same
// permissions) that is never taken for a run: it is not a run id.
func canaryName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return StagingPrefix + "canary-" + hex.EncodeToString(b)
}

// probeStaging creates, consumes from and removes a canary queue on the source, as a run does
// with its staging queue.
func (e *Engine) probeStaging(ctx context.Context, f *preflight.Facts) []preflight.PermissionProblem {
	name := canaryName()
	problem := func(what string, err error) []preflight.PermissionProblem {
		return []preflight.PermissionProblem{{Broker: e.Source.Name(), What: what, Attribute: "source.broker", Detail: err.Error()}}
	}
	if err := e.Source.CreateQueue(ctx, artemis.QueueSpec{Name: name, Durable: false, RingSize: -1, MaxConsumers: -1, AutoDelete: false}, false); err != nil {
		return problem("create a staging queue ("+StagingPrefix+"*)", err)
	}
	defer e.Source.DestroyQueue(context.WithoutCancel(ctx), name) //nolint:errcheck // a canary; removal failure is reported below when it matters
	conn, err := connectManagementNode(ctx, e.Source)
	if err != nil {
		f.ConnectionProblems = append(f.ConnectionProblems, preflight.ConnectionProblem{Broker: e.Source.Name(), Attribute: "source.broker", Detail: err.Error()})
		return nil
	}
	defer conn.Close()
	r, err := conn.NewReceiver(ctx, name+"::"+name, artemis.ReceiverOptions{Credit: 1})
	if err != nil {
		return problem("consume from a staging queue", err)
	}
	_ = r.Close(ctx)
	return nil
}

// probeDuplicateDetection sends one message twice with the same duplicate id to a canary
// queue on the target: one stored copy proves that the acceptor honours _AMQ_DUPL_ID over AMQP
// (amqpDuplicateDetection), which address settings cannot show.
func (e *Engine) probeDuplicateDetection(ctx context.Context) preflight.DuplicateProbe {
	name := canaryName()
	unknown := func(what string, err error) preflight.DuplicateProbe {
		return preflight.DuplicateProbe{Outcome: preflight.DedupUnknown, Detail: what + ": " + err.Error()}
	}
	if err := e.Target.CreateQueue(ctx, artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
		return unknown("creating a canary queue on the target", err)
	}
	defer e.Target.DestroyQueue(context.WithoutCancel(ctx), name) //nolint:errcheck // a canary
	conn, err := connectManagementNode(ctx, e.Target)
	if err != nil {
		return unknown("connecting to the target", err)
	}
	defer conn.Close()
	s, err := conn.NewSender(ctx, name+"::"+name, artemis.SenderOptions{MaxInFlight: 2})
	if err != nil {
		return unknown("sending to a canary queue on the target", err)
	}
	defer s.Close(ctx)
	for i := 0; i < 2; i++ {
		msg := &amqp.Message{Header: &amqp.MessageHeader{Durable: true},
			ApplicationProperties: map[string]any{propDuplicateID: "studio:canary:" + name}, Value: "canary"}
		p, err := s.Send(ctx, msg)
		if err == nil {
			err = p.Wait(ctx)
		}
		if err != nil {
			return unknown("sending to a canary queue on the target", err)
		}
	}
	q, err := e.Target.Queue(ctx, name)
	if err != nil {
		return unknown("reading the canary queue", err)
	}
	switch q.MessageCount {
	case 1:
		return preflight.DuplicateProbe{Outcome: preflight.DedupWorks, Detail: "a repeated duplicate id was discarded"}
	case 2:
		return preflight.DuplicateProbe{Outcome: preflight.DedupDisabled,
			Detail: fmt.Sprintf("canary queue %s on %s holds both copies", name, e.Target.Name())}
	default:
		return preflight.DuplicateProbe{Outcome: preflight.DedupUnknown, Detail: fmt.Sprintf("the canary queue holds %d messages", q.MessageCount)}
	}
}
