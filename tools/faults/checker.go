package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Tally counts, by unique producer id, every message of an iteration found after it: on the
// target (consumed by the checker or by the harness's slow consumer), still on the source, or
// in a staging queue.
type Tally struct {
	mu         sync.Mutex
	tag        string
	count      int
	onTarget   []int // times each producer id was found on the target
	onSource   []int // times each was found still on the source queue
	inStaging  []int // times each was found in a staging queue
	unexpected int
	// sourceRank is each producer id's place on the source queue before a copy (-1: not
	// there), as SetSourceOrder was told; nil when nobody looked. Of the messages the checker
	// then consumes from the source: those that come after one ranked higher, and those whose
	// delivery count is above 0. A copy must leave both at 0.
	sourceRank        []int
	lastSource        int
	sourceReordered   int
	sourceRedelivered int
	// Late, when set, counts the messages of its own tag apart (those produced after a run's
	// start), instead of as unexpected.
	Late *Tally
}

// NewTally expects the producer ids "<tag>-0" .. "<tag>-<count-1>" (bench.Fill's message ids).
func NewTally(tag string, count int) *Tally {
	return &Tally{tag: tag, count: count, onTarget: make([]int, count), onSource: make([]int, count), inStaging: make([]int, count),
		lastSource: -1}
}

// SetSourceOrder records the order of the source queue before a copy: the producer ids of its
// messages, as a browse read them (an id outside the iteration's is ignored).
func (t *Tally) SetSourceOrder(msgs []*amqp.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sourceRank = make([]int, t.count)
	for i := range t.sourceRank {
		t.sourceRank[i] = -1
	}
	for i, msg := range msgs {
		if seq, ok := t.seqOf(msg); ok && t.sourceRank[seq] < 0 {
			t.sourceRank[seq] = i
		}
	}
}

// Where a message was found.
type place int

const (
	placeTarget place = iota
	placeSource
	placeStaging
)

// seqOf reads a message's producer id: "<tag>-<seq>" in its AMQP message-id.
func (t *Tally) seqOf(msg *amqp.Message) (int, bool) {
	if msg.Properties == nil {
		return 0, false
	}
	id, ok := msg.Properties.MessageID.(string)
	if !ok {
		return 0, false
	}
	rest, ok := strings.CutPrefix(id, t.tag+"-")
	if !ok {
		return 0, false
	}
	seq, err := strconv.Atoi(rest)
	if err != nil || seq < 0 || seq >= t.count {
		return 0, false
	}
	return seq, true
}

// owns reports whether msg carries one of the tally's producer ids.
func (t *Tally) owns(msg *amqp.Message) bool {
	_, ok := t.seqOf(msg)
	return ok
}

func (t *Tally) add(msg *amqp.Message, where place) {
	t.mu.Lock()
	defer t.mu.Unlock()
	seq, ok := t.seqOf(msg)
	switch {
	case !ok && t.Late != nil && t.Late.owns(msg):
		t.Late.add(msg, where)
	case !ok:
		t.unexpected++
	case where == placeTarget:
		t.onTarget[seq]++
	case where == placeSource:
		t.onSource[seq]++
		if t.sourceRank != nil && t.sourceRank[seq] >= 0 {
			if t.sourceRank[seq] < t.lastSource {
				t.sourceReordered++
			}
			t.lastSource = max(t.lastSource, t.sourceRank[seq])
		}
		if msg.Header != nil && msg.Header.DeliveryCount > 0 {
			t.sourceRedelivered++
		}
	default:
		t.inStaging[seq]++
	}
}

// Counts are what the checker found. For a move (Tally.Counts) a message may be anywhere once;
// for a copy (Tally.CopyCounts) it must be on the target once and on the source once.
type Counts struct {
	Delivered int `json:"delivered"` // distinct producer ids on the target
	// Lost: a move's producer ids found nowhere; a copy's missing on the target.
	Lost int `json:"lost"`
	// Doubled: a move's copies beyond the first, anywhere; a copy's beyond the first on the target.
	Doubled    int `json:"doubled"`
	Unexpected int `json:"unexpected"`  // messages without one of the iteration's producer ids
	LeftSource int `json:"left_source"` // a move's ids still on the source queue (not moved, not lost)
	InStaging  int `json:"in_staging"`  // ids left in a staging queue after recovery
	// A copy's source: ids not found exactly once there (missing or doubled), messages out of
	// their order, and messages whose delivery count a copy raised.
	SourceChanged     int `json:"source_changed,omitempty"`
	SourceReordered   int `json:"source_reordered,omitempty"`
	SourceRedelivered int `json:"source_redelivered,omitempty"`
}

// Counts sums the tally.
func (t *Tally) Counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := Counts{Unexpected: t.unexpected}
	for i := 0; i < t.count; i++ {
		c.sighted(t.onTarget[i]+t.onSource[i]+t.inStaging[i], t.onTarget[i])
		c.LeftSource += min(t.onSource[i], 1)
		c.InStaging += min(t.inStaging[i], 1)
	}
	return c
}

// sighted counts one producer id found n times where it must be exactly once, onTarget of
// them on the target: lost when never, doubled beyond the first.
func (c *Counts) sighted(n, onTarget int) {
	switch {
	case n == 0:
		c.Lost++
	case n > 1:
		c.Doubled += n - 1
	}
	if onTarget > 0 {
		c.Delivered++
	}
}

// CopyCounts sums the tally of a copy: each selected message must be on the target exactly
// once and still on the source exactly once, in order and never delivered.
func (t *Tally) CopyCounts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := Counts{Unexpected: t.unexpected, SourceReordered: t.sourceReordered, SourceRedelivered: t.sourceRedelivered}
	for i := 0; i < t.count; i++ {
		c.sighted(t.onTarget[i], t.onTarget[i])
		if t.onSource[i] != 1 {
			c.SourceChanged++
		}
		c.InStaging += min(t.inStaging[i], 1)
	}
	return c
}

// checkIdle is how long the checker waits for one more message once management says the queue
// is empty; checkIdleEarly is the wait while it says messages remain.
const (
	checkIdle      = 1500 * time.Millisecond
	checkIdleEarly = 15 * time.Second
)

// drain consumes every message of queue into the tally and returns how many it consumed. It
// stops when the queue is empty by the broker's count and no message came for checkIdle.
func drain(ctx context.Context, c *artemis.Client, queue string, t *Tally, where place) (int, error) {
	conn, err := c.Connect(ctx)
	if err != nil {
		return 0, fmt.Errorf("checker: connecting to broker %q to empty %s: %w", c.Name(), queue, err)
	}
	defer conn.Close()
	r, err := conn.NewReceiver(ctx, queue+"::"+queue, artemis.ReceiverOptions{Credit: 1000})
	if err != nil {
		return 0, fmt.Errorf("checker: consuming %s on broker %q: %w", queue, c.Name(), err)
	}
	defer r.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection closes anyway
	n := 0
	for {
		idle := checkIdle
		if q, err := c.Queue(ctx, queue); err == nil && q.MessageCount > 0 {
			idle = checkIdleEarly
		}
		waitCtx, cancel := context.WithTimeout(ctx, idle)
		msg, err := r.Receive(waitCtx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return n, nil
			}
			return n, fmt.Errorf("checker: consuming %s on broker %q after %d messages: %w", queue, c.Name(), n, err)
		}
		if err := r.Accept(ctx, msg); err != nil {
			return n, fmt.Errorf("checker: accepting from %s on broker %q: %w", queue, c.Name(), err)
		}
		t.add(msg, where)
		n++
		// Read the count again only now and then: one management call per message would be slow.
		for n%500 != 0 {
			waitCtx, cancel := context.WithTimeout(ctx, checkIdle)
			msg, err := r.Receive(waitCtx)
			cancel()
			if err != nil {
				break
			}
			if err := r.Accept(ctx, msg); err != nil {
				return n, fmt.Errorf("checker: accepting from %s on broker %q: %w", queue, c.Name(), err)
			}
			t.add(msg, where)
			n++
		}
	}
}

// slowConsumer takes messages off the target queue at about perSecond, into the tally, until
// ctx ends. It is the drain of the target-full fault.
func slowConsumer(ctx context.Context, c *artemis.Client, queue string, perSecond int, t *Tally) error {
	conn, err := c.Connect(ctx)
	if err != nil {
		return fmt.Errorf("slow consumer: %w", err)
	}
	defer conn.Close()
	r, err := conn.NewReceiver(ctx, queue+"::"+queue, artemis.ReceiverOptions{Credit: 10})
	if err != nil {
		return fmt.Errorf("slow consumer: %w", err)
	}
	defer r.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection closes anyway
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		msg, err := r.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slow consumer on %s: %w", queue, err)
		}
		// Counted only once the broker has the acknowledgement: a message whose accept failed
		// is redelivered, and the checker finds it.
		if err := r.Accept(context.WithoutCancel(ctx), msg); err != nil {
			return fmt.Errorf("slow consumer on %s: %w", queue, err)
		}
		t.add(msg, placeTarget)
	}
}
