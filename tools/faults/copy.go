package faults

// The copy kinds' side of the harness: the staging queues a copy must never create, and the
// ledger's account of each copy.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// stagingQueues lists the queues under the engine's staging prefix on each broker, canaries
// included: a copy writes nothing under it on the source, so any queue there after a copy that
// was not there before it is the copy's.
func stagingQueues(ctx context.Context, brokers []*artemis.Client) (map[string][]string, error) {
	out := map[string][]string{}
	for _, c := range brokers {
		qs, err := c.ListQueues(ctx, transfer.StagingPrefix)
		if err != nil {
			return nil, fmt.Errorf("listing staging queues on %s: %w", c.Name(), err)
		}
		for _, q := range qs {
			if strings.HasPrefix(q.Name, transfer.StagingPrefix) {
				out[c.Name()] = append(out[c.Name()], q.Name)
			}
		}
	}
	return out, nil
}

// browseOrder reads the source queue's messages in order without taking them (an AMQP browser,
// as a copy reads them) and gives their order to the tally. A fill sends from two connections,
// so the queue's order is not the producer ids' order: the checker compares with this one.
func browseOrder(ctx context.Context, src *artemis.Client, queue string, count int, t *Tally) error {
	conn, err := src.Connect(ctx)
	if err != nil {
		return fmt.Errorf("connecting to %s to browse %s: %w", src.Name(), queue, err)
	}
	defer conn.Close()
	b, err := conn.NewBrowser(ctx, queue+"::"+queue, artemis.BrowserOptions{Credit: 1000, IdleTimeout: checkIdleEarly})
	if err != nil {
		return err
	}
	defer b.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection closes anyway
	msgs := make([]*amqp.Message, 0, count)
	for len(msgs) < count {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("browsing %s on %s before the copy: %d of %d messages, then none for %s", queue, src.Name(), len(msgs), count, checkIdleEarly)
		}
		msg.Data = nil // the order is all the tally keeps: not a run's worth of bodies
		msgs = append(msgs, msg)
	}
	t.SetSourceOrder(msgs)
	return nil
}

// checkCopy empties, into the tally, the target queue and the source queue (a copy leaves
// every message there: the checker counts them, in their order, once they are consumed), then
// every staging queue that appeared on the source or the target during the iteration, which
// it counts and removes.
func (h *runner) checkCopy(ctx context.Context, src, tgt *artemis.Client, srcQueue, tgtQueue string,
	before map[string][]string, tally *Tally, it *Iteration,
) error {
	if _, err := drain(ctx, tgt, tgtQueue, tally, placeTarget); err != nil {
		return err
	}
	if _, err := drain(ctx, src, srcQueue, tally, placeSource); err != nil {
		return err
	}
	brokers := []*artemis.Client{src, tgt}
	after, err := stagingQueues(ctx, brokers)
	if err != nil {
		return err
	}
	for _, c := range brokers {
		for _, q := range after[c.Name()] {
			if slices.Contains(before[c.Name()], q) {
				continue
			}
			it.StagingQueuesLeft++
			it.Notes = append(it.Notes, fmt.Sprintf("a copy left staging queue %s on %s", q, c.Name()))
			if !strings.HasSuffix(q, ".manifest") {
				if _, err := drain(ctx, c, q, tally, placeStaging); err != nil {
					return err
				}
			}
			if err := c.DestroyQueue(ctx, q); err != nil {
				return fmt.Errorf("removing %s from %s: %w", q, c.Name(), err)
			}
		}
	}
	return nil
}

// checkLedger reads the iteration's runs from the ledger: a recovered copy is one run, of
// mode copy, completed, that recorded every message it copied. It returns a note of what the
// ledger says and a problem, "" when there is none.
func (h *runner) checkLedger(ctx context.Context, it *Iteration) (note, problem string, err error) {
	l, err := ledger.Open(ctx, h.ledger.DSN)
	if err != nil {
		return "", "", err
	}
	defer l.Close()
	runs, err := l.ListRuns(ctx, ledger.RunFilter{SourceQueue: it.SourceQueue, TargetQueue: it.TargetQueue})
	if err != nil {
		return "", "", err
	}
	if len(runs) != 1 {
		return fmt.Sprintf("ledger: %d runs of the copy", len(runs)), fmt.Sprintf("the ledger has %d runs of the copy, want 1", len(runs)), nil
	}
	r := runs[0]
	note = fmt.Sprintf("ledger: run %s %s, %d copied, %d resent", r.ID, r.Status, r.Counters.Relayed, r.Counters.Resent)
	var problems []string
	if r.Mode != ledger.ModeCopy {
		problems = append(problems, fmt.Sprintf("the ledger has the run as a %s", r.Mode))
	}
	if r.Status != ledger.StatusCompleted {
		problems = append(problems, fmt.Sprintf("the ledger has the run %s", r.Status))
	}
	if r.Counters.Relayed != int64(it.Count) {
		problems = append(problems, fmt.Sprintf("the ledger counts %d copied of %d", r.Counters.Relayed, it.Count))
	}
	return note, strings.Join(problems, ", "), nil
}

// copyProblems are what the checker found wrong with a copy: each selected message on the
// target exactly once, the source as it was, nothing under the staging prefix.
func copyProblems(it Iteration) []string {
	var problems []string
	for _, p := range []struct {
		n    int
		what string
	}{
		{it.Lost, "lost (missing on the target)"},
		{it.Doubled, "doubled on the target"},
		{it.Unexpected, "unexpected"},
		{it.SourceChanged, "source messages missing or doubled"},
		{it.SourceReordered, "source messages out of order"},
		{it.SourceRedelivered, "source messages with a raised delivery count"},
		{it.StagingQueuesLeft, "staging queues made by a copy"},
	} {
		if p.n > 0 {
			problems = append(problems, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return problems
}
