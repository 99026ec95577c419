package copying

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// identitySample is how many selected messages the plan browses to count those without a
// message-id.
const identitySample = 1000

// identitySampleIdle ends the plan's sample browse: a short wait, since the sample is a
// report, not the copy.
const identitySampleIdle = 2 * time.Second

// Preflight reads what the refusal rules of a copy need from both brokers and applies them
// (preflight.CheckCopy). With writes it proves that the user may send to the target queue and
// that the target discards a repeated duplicate id (a canary); the source is only read.
func (e *Copier) Preflight(ctx context.Context, spec core.Spec, writes bool) ([]preflight.Finding, error) {
	f, err := e.setup.ReadFacts(ctx, spec, writes, nil)
	if err != nil {
		return nil, err
	}
	c := preflight.CopyFacts{Sampled: -1, Scheduled: -1}
	if q := f.SourceQueue; q != nil {
		c.Scheduled, c.Consumers, c.Delivering = q.ScheduledCount, q.ConsumerCount, q.DeliveringCount
		if err := e.setup.CountSelection(ctx, spec, &f); err != nil {
			return nil, err
		}
		problem, err := e.sampleIdentities(ctx, spec, q.FQQN(), &c, &f)
		if err != nil {
			return nil, err
		}
		if problem != nil {
			f.PermissionProblems = append(f.PermissionProblems, *problem)
		}
	}
	if cl, err := e.recordingLedger(); err == nil {
		runs, err := cl.UnfinishedCopies(ctx, spec.Key())
		if err != nil {
			return nil, fmt.Errorf("looking up unfinished copies of this transfer in the transfer ledger: %w", err)
		}
		if len(runs) > 0 {
			r := runs[0]
			c.Unfinished = &preflight.UnfinishedCopy{RunID: r.RunID, T0: r.T0, Status: r.Status, Copied: r.Copied}
		}
	}
	return preflight.CheckCopy(f, c), nil
}

// sampleIdentities browses the first identitySample selected messages (frozen at now, as a
// copy started now would be) and counts those without a message-id and those identical to
// another. A browse the broker refuses is a permission problem: a copy needs browse on the
// source queue and nothing more there.
func (e *Copier) sampleIdentities(ctx context.Context, spec core.Spec, fqqn string, c *preflight.CopyFacts, f *preflight.Facts) (*preflight.PermissionProblem, error) {
	conn, err := core.ConnectManagementNode(ctx, e.setup.Source)
	if err != nil {
		f.ConnectionProblems = append(f.ConnectionProblems, preflight.ConnectionProblem{Broker: e.setup.Source.Name(), Attribute: "source.broker", Detail: err.Error()})
		return nil, nil
	}
	defer conn.Close()
	selector := copySelectors(spec.Selection, time.Now())[0]
	if f.FilterError != "" {
		selector = "" // the filter's own finding refuses the copy; the sample still shows the queue's identities
	}
	b, err := conn.NewBrowser(ctx, fqqn, artemis.BrowserOptions{Credit: 200, Selector: selector, IdleTimeout: identitySampleIdle})
	if err != nil {
		if errors.Is(err, artemis.ErrForbidden) {
			return &preflight.PermissionProblem{Broker: e.setup.Source.Name(), What: "browse queue " + spec.Source.Queue + " over AMQP",
				Attribute: "source.broker", Detail: err.Error()}, nil
		}
		return nil, fmt.Errorf("browsing the first selected messages of %s on broker %q: %w", spec.Source.Queue, e.setup.Source.Name(), err)
	}
	defer b.Close(context.WithoutCancel(ctx))
	seen := make(map[int64]bool, identitySample)
	c.Sampled = 0
	for c.Sampled < identitySample {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("browsing the first selected messages of %s on broker %q: %w", spec.Source.Queue, e.setup.Source.Name(), err)
		}
		if !ok {
			break
		}
		c.Sampled++
		if !hasProducerMessageID(msg) {
			c.WithoutMessageID++
		}
		id := messageIdentity(msg)
		if seen[id] {
			c.Indistinguishable++
		}
		seen[id] = true
	}
	return nil, nil
}
