package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// propCLICount numbers the messages of `artemis producer` (one thread: 0..count-1).
const propCLICount = "count"

// Check is what the brokers held after a run.
type Check struct {
	OK         bool  `json:"ok"`
	SourceLeft int64 `json:"source_left"` // still on the source queue
	// SourceReceived and SourceDistinct (a copy's check only) are the messages consumed from the
	// source after the copy and the distinct sequence numbers of the fill among them.
	SourceReceived int64  `json:"source_received,omitempty"`
	SourceDistinct int64  `json:"source_distinct,omitempty"`
	TargetCount    int64  `json:"target_count"` // the target queue's message count
	Received       int64  `json:"received"`     // consumed from the target
	Distinct       int64  `json:"distinct"`     // distinct sequence numbers of this fill among them
	Duplicates     int64  `json:"duplicates"`
	Foreign        int64  `json:"foreign"`      // without this fill's tag or with a sequence out of range
	StagingLeft    int    `json:"staging_left"` // staging queues of the run left on the source
	Problem        string `json:"problem,omitempty"`
}

// verifyIdle is how long the check waits for one more target message: the target's count is
// read first, so this only ends a consumption the count says is complete.
const verifyIdle = 5 * time.Second

// Verify checks a finished run: the source queue is empty, the target queue holds exactly
// count messages, and consuming them (which empties the target) yields every sequence number
// of the fill once. stagingPrefix, when not empty, must match no queue left on the source.
func Verify(ctx context.Context, source, target *artemis.Client, srcQueue, tgtQueue string, count, size int, tag, stagingPrefix string) (Check, error) {
	return verify(ctx, source, target, srcQueue, tgtQueue, count, size, tag, stagingPrefix, false)
}

// VerifyCopy checks a finished copy as Verify checks a move, except that the source must still
// hold every message of the fill once (a copy leaves the source as it was): consuming it too,
// which empties it, yields every sequence number once and nothing else.
func VerifyCopy(ctx context.Context, source, target *artemis.Client, srcQueue, tgtQueue string, count, size int, tag, stagingPrefix string) (Check, error) {
	return verify(ctx, source, target, srcQueue, tgtQueue, count, size, tag, stagingPrefix, true)
}

// countQueues starts a check with what the brokers count: the source queue's messages, the
// target queue's, and the staging queues left on the source (none looked for without
// stagingPrefix).
func countQueues(ctx context.Context, source, target *artemis.Client, srcQueue, tgtQueue, stagingPrefix string) (Check, error) {
	var c Check
	sq, err := source.Queue(ctx, srcQueue)
	if err != nil {
		return c, fmt.Errorf("checking the source queue: %w", err)
	}
	c.SourceLeft = sq.MessageCount
	tq, err := target.Queue(ctx, tgtQueue)
	if err != nil {
		return c, fmt.Errorf("checking the target queue: %w", err)
	}
	c.TargetCount = tq.MessageCount
	if stagingPrefix != "" {
		left, err := source.ListQueues(ctx, stagingPrefix)
		if err != nil {
			return c, fmt.Errorf("looking for staging left on the source: %w", err)
		}
		c.StagingLeft = len(left)
	}
	return c, nil
}

func verify(ctx context.Context, source, target *artemis.Client, srcQueue, tgtQueue string, count, size int, tag, stagingPrefix string, copied bool) (Check, error) {
	c, err := countQueues(ctx, source, target, srcQueue, tgtQueue, stagingPrefix)
	if err != nil {
		return c, err
	}
	if err := consumeChecked(ctx, target, tgtQueue, count, size, tag, max(c.TargetCount, int64(count)), &c); err != nil {
		return c, err
	}
	var problems []string
	switch {
	case copied:
		var sc Check
		if err := consumeChecked(ctx, source, srcQueue, count, size, tag, max(c.SourceLeft, int64(count)), &sc); err != nil {
			return c, fmt.Errorf("the source after the copy: %w", err)
		}
		c.SourceReceived, c.SourceDistinct = sc.Received, sc.Distinct
		if c.SourceLeft != int64(count) || sc.Received != int64(count) || sc.Distinct != int64(count) {
			problems = append(problems, fmt.Sprintf("the source counts %d messages after the copy and gave up %d, %d distinct, want %d",
				c.SourceLeft, sc.Received, sc.Distinct, count))
		}
		if sc.Duplicates > 0 || sc.Foreign > 0 {
			problems = append(problems, fmt.Sprintf("the source holds %d duplicates and %d messages not of this fill after the copy", sc.Duplicates, sc.Foreign))
		}
	case c.SourceLeft != 0:
		problems = append(problems, fmt.Sprintf("%d messages left on the source", c.SourceLeft))
	}
	problems = append(problems, targetProblems(c, count)...)
	c.OK = len(problems) == 0
	c.Problem = strings.Join(problems, "; ")
	return c, nil
}

// targetProblems lists what is wrong on the target of a run of count messages, and in the
// staging queues it left on the source.
func targetProblems(c Check, count int) []string {
	var problems []string
	if c.TargetCount != int64(count) {
		problems = append(problems, fmt.Sprintf("the target counts %d messages, want %d", c.TargetCount, count))
	}
	if c.Received != int64(count) || c.Distinct != int64(count) {
		problems = append(problems, fmt.Sprintf("consumed %d messages from the target, %d distinct, want %d", c.Received, c.Distinct, count))
	}
	for _, p := range []struct {
		n    int64
		what string
	}{{c.Duplicates, "duplicates"}, {c.Foreign, "messages not of this fill"}, {int64(c.StagingLeft), "staging queues left on the source"}} {
		if p.n > 0 {
			problems = append(problems, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return problems
}

// consumeChecked consumes up to limit messages from queue and records their sequence numbers.
func consumeChecked(ctx context.Context, c *artemis.Client, queue string, count, size int, tag string, limit int64, chk *Check) error {
	conn, err := c.Connect(ctx)
	if err != nil {
		return fmt.Errorf("checking queue %s: %w", queue, err)
	}
	defer conn.Close()
	credit := max(1, min(2000, harness.FillInFlightBytes/max(size, 1)))
	r, err := conn.NewReceiver(ctx, queue+"::"+queue, artemis.ReceiverOptions{Credit: credit})
	if err != nil {
		return fmt.Errorf("checking queue %s: %w", queue, err)
	}
	defer r.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection closes anyway
	seen := make([]bool, count)
	for chk.Received < limit+1 { // one more than the count, to see a message the count missed
		waitCtx, cancel := context.WithTimeout(ctx, verifyIdle)
		msg, err := r.Receive(waitCtx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return nil // nothing more arrived
			}
			return fmt.Errorf("consuming queue %s after %d messages: %w", queue, chk.Received, err)
		}
		if err := r.Accept(ctx, msg); err != nil {
			return fmt.Errorf("consuming queue %s: %w", queue, err)
		}
		chk.Received++
		seq, ok := sequenceOf(msg, tag)
		switch {
		case !ok || seq < 0 || seq >= int64(count):
			chk.Foreign++
		case seen[seq]:
			chk.Duplicates++
		default:
			seen[seq] = true
			chk.Distinct++
		}
		if chk.Received >= limit && chk.Distinct == int64(count) {
			return nil // everything there is, by the broker's own count
		}
	}
	return nil
}

// sequenceOf reads a message's sequence number when it carries the fill's tag: ours, or the
// "count" property of Artemis's CLI producer.
func sequenceOf(msg *amqp.Message, tag string) (int64, bool) {
	if got, _ := msg.ApplicationProperties[harness.FillProperty].(string); got != tag {
		return 0, false
	}
	seq, ok := msg.ApplicationProperties[harness.SeqProperty]
	if !ok {
		seq = msg.ApplicationProperties[propCLICount]
	}
	switch v := seq.(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case uint64:
		return int64(v), true
	}
	return 0, false
}

// stagingPrefixOf is the prefix of every staging, manifest and quarantine queue of runs of spec.
func stagingPrefixOf(spec transfer.Spec) string { return transfer.StagingPrefix + spec.Key() + "-" }
