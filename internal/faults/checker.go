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
}

// NewTally expects the producer ids "<tag>-0" .. "<tag>-<count-1>" (bench.Fill's message ids).
func NewTally(tag string, count int) *Tally {
	return &Tally{tag: tag, count: count, onTarget: make([]int, count), onSource: make([]int, count), inStaging: make([]int, count)}
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

func (t *Tally) add(msg *amqp.Message, where place) {
	t.mu.Lock()
	defer t.mu.Unlock()
	seq, ok := t.seqOf(msg)
	switch {
	case !ok:
		t.unexpected++
	case where == placeTarget:
		t.onTarget[seq]++
	case where == placeSource:
		t.onSource[seq]++
	default:
		t.inStaging[seq]++
	}
}

// Counts are what the checker found.
type Counts struct {
	Delivered  int `json:"delivered"`   // distinct producer ids on the target
	Lost       int `json:"lost"`        // producer ids found nowhere
	Doubled    int `json:"doubled"`     // extra copies beyond the first, anywhere
	Unexpected int `json:"unexpected"`  // messages without one of the iteration's producer ids
	LeftSource int `json:"left_source"` // ids still on the source queue (not moved, not lost)
	InStaging  int `json:"in_staging"`  // ids left in a staging queue after recovery
}

// Counts sums the tally.
func (t *Tally) Counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := Counts{Unexpected: t.unexpected}
	for i := 0; i < t.count; i++ {
		n := t.onTarget[i] + t.onSource[i] + t.inStaging[i]
		switch {
		case n == 0:
			c.Lost++
		case n > 1:
			c.Doubled += n - 1
		}
		if t.onTarget[i] > 0 {
			c.Delivered++
		}
		c.LeftSource += min(t.onSource[i], 1)
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
