package transfer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// The plan's checks of a copy: the target meets the same refusal rules as a move's (same
// canaries: a send permission probe and the duplicate-detection canary), but the source is
// only read: its queue, the selection's count, a browse-permission probe and a bounded browse
// of the first selected messages, which says how many carry no message-id. A copy never
// writes to the source, so there is no staging canary and no createQueue permission to check.

// identitySample is how many selected messages the plan browses to count those without a
// message-id.
const identitySample = 1000

// identitySampleIdle ends the plan's sample browse: a short wait, since the sample is a
// report, not the copy.
const identitySampleIdle = 2 * time.Second

// Summaries of the copy's own findings.
const (
	summaryCopyIdentity        = "How a copy tells messages apart"
	summaryCopySourceConsumers = "Source queue has consumers: messages in delivery are not copied"
	summaryCopyScheduled       = "Scheduled messages are not copied"
	summaryCopyUnfinished      = "An unfinished copy of this transfer will be resumed"
)

// copyFacts are what the copy's own findings need, on top of preflight.Facts.
type copyFacts struct {
	Source preflight.Endpoint
	// Sampled is how many selected messages the plan browsed (at most identitySample); -1 when
	// it could not browse. WithoutMessageID of them carry no message-id, Indistinguishable are
	// identical in identity to another of them.
	Sampled, WithoutMessageID, Indistinguishable int
	// Consumers and Delivering are the source queue's consumers and messages in delivery now.
	Consumers  int
	Delivering int64
	// Scheduled is how many scheduled messages the source queue holds; -1 unknown.
	Scheduled int64
	// Unfinished is the unfinished copy of this transfer in the ledger; nil for none.
	Unfinished *CopyRun
}

// copyFindings are the copy's own findings: all warnings.
func copyFindings(c copyFacts) []preflight.Finding {
	var out []preflight.Finding
	warn := func(attribute, summary, detail string, args ...any) {
		out = append(out, preflight.Finding{Severity: preflight.Warning, Attribute: attribute, Summary: summary, Detail: fmt.Sprintf(detail, args...)})
	}
	if r := c.Unfinished; r != nil {
		t0 := r.T0.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		warn("", summaryCopyUnfinished,
			"Copy run %s of this transfer is unfinished (%d messages copied since %s, status %s); apply resumes it with the same "+
				"start time, so its selection stays the one frozen at %s, and skips what the ledger records as copied.",
			r.RunID, r.Copied, t0, r.Status, t0)
	}
	switch {
	case c.Sampled < 0:
		warn("source.queue", summaryCopyIdentity,
			"The plan could not browse queue %q on broker %q to count the selected messages without a message-id. A copy "+
				"identifies each message by its properties (message-id, creation-time, ...), application properties and body: "+
				"messages identical in all of those are copied once.", c.Source.Queue, c.Source.Broker)
	case c.Sampled > 0:
		warn("source.queue", summaryCopyIdentity,
			"Over AMQP the broker shows no id of its own for a browsed message, so a copy identifies each message by its "+
				"properties (message-id, creation-time, ...), application properties and body, and records that identity in the "+
				"ledger. Of the first %d selected messages on queue %q, %d carry no message-id and %d are identical to another "+
				"of them. Messages identical in all of that cannot be told apart: the target gets one of them, and the apply's "+
				"result counts the others. Producers that set a unique message-id (every JMS client does) never meet this.",
			c.Sampled, c.Source.Queue, c.WithoutMessageID, c.Indistinguishable)
	}
	if c.Consumers > 0 {
		warn("source.queue", summaryCopySourceConsumers,
			"Queue %q on broker %q has %d consumer(s) (%d message(s) in delivery now). A copy browses the queue and takes "+
				"nothing from it, so the consumers keep receiving every message once; but a message being delivered to a "+
				"consumer when the browse passes it is not seen, and a message a consumer acknowledges before the browse "+
				"reaches it is gone: the copy holds the selected messages that were on the queue, and not in delivery, when "+
				"the browse passed. Stop the consumers first for a complete copy.",
			c.Source.Queue, c.Source.Broker, c.Consumers, c.Delivering)
	}
	if c.Scheduled > 0 {
		warn("source.queue", summaryCopyScheduled,
			"Queue %q on broker %q holds %d scheduled message(s). A browse does not see a scheduled message before its "+
				"delivery time, so a copy does not copy it; apply the copy again after that time to copy it.",
			c.Source.Queue, c.Source.Broker, c.Scheduled)
	}
	return out
}

// copyPreflight is Preflight for a copy.
func (e *Engine) copyPreflight(ctx context.Context, spec Spec, writes bool) ([]preflight.Finding, error) {
	f, err := e.ReadFacts(ctx, spec, writes, nil)
	if err != nil {
		return nil, err
	}
	c := copyFacts{Source: f.Source, Sampled: -1, Scheduled: -1}
	if !writes {
		f.SkippedWriteChecks = []string{
			fmt.Sprintf("that the user of broker %q may send to %s", e.Target.Name(), spec.Target.Queue),
			fmt.Sprintf("that broker %q discards a repeated duplicate id sent over AMQP", e.Target.Name()),
		}
		f.DuplicateDetection = preflight.DuplicateProbe{Outcome: preflight.DedupSkipped}
	}
	if q := f.SourceQueue; q != nil {
		// The move's wording of these two does not fit a copy: the copy's own findings say them.
		c.Scheduled, c.Consumers, c.Delivering = q.ScheduledCount, q.ConsumerCount, q.DeliveringCount
		masked := *q
		masked.ConsumerCount = 0
		f.SourceQueue = &masked
		if err := e.CountSelection(ctx, spec, &f); errors.Is(err, artemis.ErrForbidden) {
			f.PermissionProblems = append(f.PermissionProblems, preflight.PermissionProblem{Broker: e.Source.Name(),
				What: "count the messages of " + spec.Source.Queue, Attribute: "source.broker", Detail: err.Error()})
		} else if err != nil {
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
	if cl, err := e.copyLedger(); err == nil {
		runs, err := cl.UnfinishedCopies(ctx, spec.Key())
		if err != nil {
			return nil, fmt.Errorf("looking up unfinished copies of this transfer in the transfer ledger: %w", err)
		}
		if len(runs) > 0 {
			c.Unfinished = &runs[0]
		}
	}
	findings := append(preflight.Check(f), copyFindings(c)...)
	sort.SliceStable(findings, func(i, j int) bool { return findings[i].Severity < findings[j].Severity })
	return findings, nil
}

// sampleIdentities browses the first identitySample selected messages (frozen at now, as a
// copy started now would be) and counts those without a message-id and those identical to
// another. A browse the broker refuses is a permission problem: a copy needs browse on the
// source queue and nothing more there.
func (e *Engine) sampleIdentities(ctx context.Context, spec Spec, fqqn string, c *copyFacts, f *preflight.Facts) (*preflight.PermissionProblem, error) {
	conn, err := ConnectManagementNode(ctx, e.Source)
	if err != nil {
		f.ConnectionProblems = append(f.ConnectionProblems, preflight.ConnectionProblem{Broker: e.Source.Name(), Attribute: "source.broker", Detail: err.Error()})
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
			return &preflight.PermissionProblem{Broker: e.Source.Name(), What: "browse queue " + spec.Source.Queue + " over AMQP",
				Attribute: "source.broker", Detail: err.Error()}, nil
		}
		return nil, fmt.Errorf("browsing the first selected messages of %s on broker %q: %w", spec.Source.Queue, e.Source.Name(), err)
	}
	defer b.Close(context.WithoutCancel(ctx))
	seen := make(map[int64]bool, identitySample)
	c.Sampled = 0
	for c.Sampled < identitySample {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("browsing the first selected messages of %s on broker %q: %w", spec.Source.Queue, e.Source.Name(), err)
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
