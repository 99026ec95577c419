package transfer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// Preflight reads what the refusal rules need from both brokers and applies them. Nothing is
// moved: the only writes are short-lived canaries (studio.transfer.canary-*), which prove that
// the user may make every call a run makes on its staging queues on the source, and that the
// target discards a repeated duplicate id. A pass is remembered in e.PassedChecks, when set,
// for the run that follows it; a refusal forgets an earlier pass.
func (e *Engine) Preflight(ctx context.Context, spec Spec) ([]preflight.Finding, error) {
	findings, err := e.preflight(ctx, spec, true)
	e.PassedChecks.Note(CheckKey(spec, e.Options), err == nil && !preflight.HasErrors(findings))
	return findings, err
}

// PreflightWithoutWrites is Preflight for a reviewer whose broker user may only read and browse:
// the checks that need writes (the two canaries and the target send permission) are skipped, and
// a warning says so. A run always makes every check before it moves anything.
func (e *Engine) PreflightWithoutWrites(ctx context.Context, spec Spec) ([]preflight.Finding, error) {
	findings, err := e.preflight(ctx, spec, false)
	if err != nil || preflight.HasErrors(findings) {
		e.PassedChecks.Note(CheckKey(spec, e.Options), false) // never remembered as passed: it skipped the canaries
	}
	return findings, err
}

func (e *Engine) preflight(ctx context.Context, spec Spec, writes bool) ([]preflight.Finding, error) {
	if spec.Mode == ModeCopy {
		return e.copyPreflight(ctx, spec, writes) // a copy only reads the source
	}
	f, err := e.ReadFacts(ctx, spec, writes, func(ctx context.Context, f *preflight.Facts) error {
		return e.readMoveSourceFacts(ctx, spec, writes, f)
	})
	if err != nil {
		return nil, err
	}
	if !writes {
		f.SkippedWriteChecks = []string{
			fmt.Sprintf("that the user of broker %q may run a staging queue (%s*): create and remove it and its address settings, "+
				"count, browse, list and move its messages, and send, consume and browse over AMQP", e.Source.Name(), StagingPrefix),
			fmt.Sprintf("that the user of broker %q may send to %s", e.Target.Name(), spec.Target.Queue),
			fmt.Sprintf("that broker %q discards a repeated duplicate id sent over AMQP", e.Target.Name()),
		}
		f.DuplicateDetection = preflight.DuplicateProbe{Outcome: preflight.DedupSkipped}
	}
	return preflight.Check(f), nil
}

// readMoveSourceFacts reads what only a move needs of the source: the selection's size, the
// staging canaries and the transfer's unfinished runs.
func (e *Engine) readMoveSourceFacts(ctx context.Context, spec Spec, writes bool, f *preflight.Facts) error {
	if f.SourceQueue != nil {
		f.ScheduledMessages = f.SourceQueue.ScheduledCount
		if err := e.CountSelection(ctx, spec, f); errors.Is(err, artemis.ErrForbidden) {
			f.PermissionProblems = append(f.PermissionProblems, preflight.PermissionProblem{Broker: e.Source.Name(),
				What: "count the messages of " + spec.Source.Queue, Attribute: "source.broker", Detail: err.Error()})
		} else if err != nil {
			return err
		}
	}
	if writes {
		problems, err := e.probeStaging(ctx, f)
		if err != nil {
			return err
		}
		f.PermissionProblems = append(f.PermissionProblems, problems...)
	}
	runs, err := e.UnfinishedRuns(ctx, &spec)
	if errors.Is(err, artemis.ErrForbidden) {
		// A run lists the staging queues to find its own: a refusal, not a plan error.
		f.PermissionProblems = append(f.PermissionProblems, preflight.PermissionProblem{Broker: e.Source.Name(),
			What: "list the queues of the broker (listQueues)", Attribute: "source.broker", Detail: err.Error()})
	} else if err != nil {
		return err
	}
	if len(runs) > 0 {
		f.UnfinishedRun = &preflight.UnfinishedRun{RunID: runs[0].RunID, Staged: runs[0].Messages, T0: runs[0].T0}
	}
	return nil
}

// readFacts reads what the refusal rules of every transfer, move or copy, need of both brokers:
// their versions and the nodes their URLs reach, both queues, and the target address's
// settings, diverts and usage, with the target's send and duplicate-detection probes when the
// plan may write. moreSource, when not nil, reads more of the source once its queue is known.
//
// The two brokers are read at the same time, each in its own goroutine on its own client: a
// plan, and a resume's check before it relays, wait for the slower broker rather than for both
// one after the other (each is a chain of round trips, and the canaries write to the brokers'
// journals). Each side fills only its own fields; the target's problems are listed first.
func (e *Engine) ReadFacts(ctx context.Context, spec Spec, writes bool, moreSource func(context.Context, *preflight.Facts) error) (preflight.Facts, error) {
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
	f.PermissionProblems = append(target.PermissionProblems, f.PermissionProblems...)
	f.ConnectionProblems = append(target.ConnectionProblems, f.ConnectionProblems...)
	return f, nil
}

// readSourceFacts is readFacts' source side.
func (e *Engine) readSourceFacts(ctx context.Context, spec Spec, f *preflight.Facts, more func(context.Context, *preflight.Facts) error) error {
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

// readTargetFacts is readFacts' target side; it fills f's target fields and problems.
func (e *Engine) readTargetFacts(ctx context.Context, spec Spec, writes bool, f *preflight.Facts) error {
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
	if writes {
		f.PermissionProblems = append(f.PermissionProblems, e.probeTargetSend(ctx, f.TargetQueue.FQQN(), f)...)
		// One canary answers for every transfer of this process to the target broker.
		f.DuplicateDetection = e.duplicateDetection(ctx, f.TargetBroker.NodeID)
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

// browsePageSize is the broker's default management-browse-page-size: a filtered count
// examines only that many messages from the head of the queue.
const browsePageSize = 200

// countSelection estimates the selection's size now, and how many selected messages carry an
// expiry. The broker's filtered counts look only at the head of the queue, so on a deeper queue
// they are lower bounds.
func (e *Engine) CountSelection(ctx context.Context, spec Spec, f *preflight.Facts) error {
	sel := spec.Selection
	switch {
	case len(sel.MessageIDs) > 0:
		// Exact counts need lists short enough to stay under the cap; long lists are an upper bound.
		if len(sel.MessageIDs) > 20*inFlightSelectorChunk {
			f.SelectionCount, f.SelectionCountUpperBound = int64(len(sel.MessageIDs)), true
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
func (e *Engine) probeTargetSend(ctx context.Context, fqqn string, f *preflight.Facts) []preflight.PermissionProblem {
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

// canaryName names a throw-away queue under the staging prefix (covered by the same
// permissions) that is never taken for a run: it is not a run id.
func CanaryName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return StagingPrefix + "canary-" + hex.EncodeToString(b)
}

// probeStaging makes, on canary queues of the source, every call a run makes on its staging,
// so that a user missing one permission is refused at plan rather than midway through a run:
// the management operations (address settings, queues, counting, browsing, listing, both
// moves) and the messaging ones (send to and browse the manifest-like queue, consume from the
// staging-like one). Each refusal names the operation. The canaries are empty, so the moves
// move nothing, and they are always removed. Errors other than a refusal are returned.
func (e *Engine) probeStaging(ctx context.Context, f *preflight.Facts) (problems []preflight.PermissionProblem, err error) {
	src, staging := e.Source, CanaryName()
	manifest := staging + manifestSuffix
	// refused records a refused call; any other failure ends the probe with its error.
	refused := func(what string, err error) bool {
		if err == nil {
			return false
		}
		problems = append(problems, preflight.PermissionProblem{Broker: src.Name(), What: what, Attribute: "source.broker", Detail: err.Error()})
		return true
	}
	management := func(what string, err error) (stop bool, _ error) {
		if err == nil {
			return false, nil
		}
		if errors.Is(err, artemis.ErrForbidden) {
			return refused(what, err), nil
		}
		return true, fmt.Errorf("checking on broker %q that a staging queue can be run (%s): %w", src.Name(), what, err)
	}
	cleanup := context.WithoutCancel(ctx)

	// As a run does: the settings first, then the queues; removed in the reverse order.
	if stop, err := management("add address settings for a staging address (addAddressSettings)",
		src.AddAddressSettings(ctx, staging, stagingSettings(f.SourceBroker.Version, ""))); stop {
		return problems, err
	}
	defer func() {
		if _, rmErr := management("remove the address settings of a staging address (removeAddressSettings)",
			src.RemoveAddressSettings(cleanup, staging)); rmErr != nil && err == nil {
			err = rmErr
		}
	}()
	queues := []artemis.QueueSpec{
		{Name: staging, Address: staging, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: 1},
		{Name: manifest, Address: staging, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: -1,
			LastValue: true, LastValueKey: recordKindProperty},
	}
	for _, q := range queues {
		if stop, err := management("create a staging queue ("+StagingPrefix+"*, createQueue)", src.CreateQueue(ctx, q, false)); stop {
			return problems, err
		}
		defer func(name string) {
			if _, rmErr := management("remove a staging queue (destroyQueue)", src.DestroyQueue(cleanup, name)); rmErr != nil && err == nil {
				err = rmErr
			}
		}(q.Name)
	}

	// The management calls of a run on its staging queue; the canary is empty, so each reads
	// or moves nothing.
	calls := []struct {
		what string
		call func() error
	}{
		{"count the messages of a queue (countMessages)", func() error { _, err := src.CountMessages(ctx, staging, ""); return err }},
		{"browse the messages of a queue (browse)", func() error { _, err := src.BrowseMessages(ctx, staging, "", 1); return err }},
		{"list the messages of a queue (listMessagesAsJSON)", func() error { _, err := src.ListMessages(ctx, staging, ""); return err }},
		{"move messages between queues (moveMessages)", func() error {
			_, err := src.MoveMessages(ctx, artemis.MoveRequest{Queue: staging, TargetQueue: manifest, Count: 1})
			return err
		}},
		{"move a message by its id (moveMessage)", func() error { _, err := src.MoveMessage(ctx, staging, -1, manifest); return err }},
	}
	for _, c := range calls {
		if stop, err := management(c.what, c.call()); stop && err != nil {
			return problems, err
		}
	}

	// Messaging: the broker checks each permission when the link attaches.
	conn, err := ConnectManagementNode(ctx, src)
	if err != nil {
		f.ConnectionProblems = append(f.ConnectionProblems, preflight.ConnectionProblem{Broker: src.Name(), Attribute: "source.broker", Detail: err.Error()})
		return problems, nil
	}
	defer conn.Close()
	if r, err := conn.NewReceiver(ctx, staging+"::"+staging, artemis.ReceiverOptions{Credit: 1}); !refused("consume from a staging queue ("+StagingPrefix+"*)", err) {
		_ = r.Close(ctx)
	}
	if s, err := conn.NewSender(ctx, staging+"::"+manifest, artemis.SenderOptions{MaxInFlight: 1}); !refused("send to a run's manifest queue ("+StagingPrefix+"*)", err) {
		_ = s.Close(ctx)
	}
	if b, err := conn.NewBrowser(ctx, staging+"::"+manifest, artemis.BrowserOptions{Credit: 1}); !refused("browse a run's manifest queue ("+StagingPrefix+"*)", err) {
		_ = b.Close(ctx)
	}
	return problems, nil
}

// probeDuplicateDetection sends one message twice with the same duplicate id to canary queue
// name on the target: one stored copy proves that the acceptor honours _AMQ_DUPL_ID over AMQP
// (amqpDuplicateDetection), which address settings cannot show. The broker logs the discarded
// repeat as a warning (AMQ222059 Duplicate message detected), naming the canary queue; callers
// go through duplicateDetection, which sends one canary per target for many transfers.
func (e *Engine) probeDuplicateDetection(ctx context.Context, name string) preflight.DuplicateProbe {
	unknown := func(what string, err error) preflight.DuplicateProbe {
		return preflight.DuplicateProbe{Outcome: preflight.DedupUnknown, Detail: what + ": " + err.Error()}
	}
	if err := e.Target.CreateQueue(ctx, artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
		return unknown("creating a canary queue on the target", err)
	}
	defer e.Target.DestroyQueue(context.WithoutCancel(ctx), name) //nolint:errcheck // a canary
	conn, err := ConnectManagementNode(ctx, e.Target)
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
