package move

import (
	"context"
	"errors"
	"fmt"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Preflight reads what the refusal rules of a move need from both brokers and applies them.
// With writes it proves, on canary queues (studio.transfer.canary-*), that the user may make
// every call a run makes on its staging queues on the source, and that the target discards a
// repeated duplicate id; without, a finding says which checks it skipped.
func (e *Mover) Preflight(ctx context.Context, spec core.Spec, writes bool) ([]preflight.Finding, error) {
	f, err := e.setup.ReadFacts(ctx, spec, writes, func(ctx context.Context, f *preflight.Facts) error {
		return e.readMoveSourceFacts(ctx, spec, writes, f)
	})
	if err != nil {
		return nil, err
	}
	if !writes {
		// The staging canary comes first, before the target's checks that ReadFacts skipped.
		f.SkippedWriteChecks = append([]string{fmt.Sprintf("that the user of broker %q may run a staging queue (%s*): create and "+
			"remove it and its address settings, count, browse, list and move its messages, and send, consume and browse over AMQP",
			e.setup.Source.Name(), core.StagingPrefix)}, f.SkippedWriteChecks...)
	}
	return preflight.Check(f), nil
}

// readMoveSourceFacts reads what only a move needs of the source: the selection's size, the
// staging canaries and the transfer's unfinished runs.
func (e *Mover) readMoveSourceFacts(ctx context.Context, spec core.Spec, writes bool, f *preflight.Facts) error {
	if f.SourceQueue != nil {
		f.ScheduledMessages = f.SourceQueue.ScheduledCount
		if err := e.setup.CountSelection(ctx, spec, f); err != nil {
			return err
		}
	}
	if writes {
		probe := e.setup.StagingProbes.Outcome(ctx, e.setup.Source.Name()+"/"+f.SourceBroker.NodeID,
			func(ctx context.Context) core.StagingProbe {
				problems, err := e.probeStaging(ctx, f)
				return core.StagingProbe{Problems: problems, Err: err}
			})
		if probe.Err != nil {
			return probe.Err
		}
		f.PermissionProblems = append(f.PermissionProblems, probe.Problems...)
	}
	runs, err := e.unfinishedRuns(ctx, &spec)
	if errors.Is(err, artemis.ErrForbidden) {
		// A run lists the staging queues to find its own: a refusal, not a plan error.
		f.PermissionProblems = append(f.PermissionProblems, preflight.PermissionProblem{Broker: e.setup.Source.Name(),
			What: "list the queues of the broker (listQueues)", Attribute: "source.broker", Detail: err.Error()})
	} else if err != nil {
		return err
	}
	if len(runs) > 0 {
		f.UnfinishedRun = &preflight.UnfinishedRun{RunID: runs[0].RunID, Staged: runs[0].Messages, T0: runs[0].T0}
	}
	return nil
}

// probeStaging makes, on canary queues of the source, every call a run makes on its staging,
// so that a user missing one permission is refused at plan rather than midway through a run:
// the management operations (address settings, queues, counting, browsing, listing, both
// moves) and the messaging ones (send to and browse the manifest-like queue, consume from the
// staging-like one). Each refusal names the operation. The canaries are empty, so the moves
// move nothing, and they are always removed. Errors other than a refusal are returned.
func (e *Mover) probeStaging(ctx context.Context, f *preflight.Facts) (problems []preflight.PermissionProblem, err error) {
	src, staging := e.setup.Source, core.CanaryName()
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
		if stop, err := management("create a staging queue ("+core.StagingPrefix+"*, createQueue)", src.CreateQueue(ctx, q, false)); stop {
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
	conn, err := core.ConnectManagementNode(ctx, src)
	if err != nil {
		f.ConnectionProblems = append(f.ConnectionProblems, preflight.ConnectionProblem{Broker: src.Name(), Attribute: "source.broker", Detail: err.Error()})
		return problems, nil
	}
	defer conn.Close()
	if r, err := conn.NewReceiver(ctx, artemis.FQQN(staging, staging), artemis.ReceiverOptions{Credit: 1}); !refused("consume from a staging queue ("+core.StagingPrefix+"*)", err) {
		_ = r.Close(ctx)
	}
	if s, err := conn.NewSender(ctx, artemis.FQQN(staging, manifest), artemis.SenderOptions{MaxInFlight: 1}); !refused("send to a run's manifest queue ("+core.StagingPrefix+"*)", err) {
		_ = s.Close(ctx)
	}
	if b, err := conn.NewBrowser(ctx, artemis.FQQN(staging, manifest), artemis.BrowserOptions{Credit: 1}); !refused("browse a run's manifest queue ("+core.StagingPrefix+"*)", err) {
		_ = b.Close(ctx)
	}
	return problems, nil
}
