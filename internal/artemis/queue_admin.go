package artemis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// QueueDefinition is the shape of a queue an operator declares: every field the broker's
// createQueue takes that decides which messages the queue gets and keeps. Zero values are
// written as they are, so nothing comes from address-setting defaults by accident.
type QueueDefinition struct {
	Name        string
	Address     string // empty: the queue's own name
	RoutingType string // ANYCAST or MULTICAST
	Durable     bool
	Filter      string // empty: every message
	// MaxConsumers is -1 for no limit.
	MaxConsumers int
	Exclusive    bool
	LastValue    bool
	// LastValueKey is the property that groups a last-value queue's messages; empty: the
	// broker's _AMQ_LVQ_NAME.
	LastValueKey       string
	PurgeOnNoConsumers bool
	RingSize           int64 // -1: not a ring queue
	Enabled            bool
	AutoDelete         bool
}

// DeclareQueue creates a queue of the given shape, and its address when missing (the broker
// marks such an address auto-created). An existing queue is an error.
func (c *Client) DeclareQueue(ctx context.Context, def QueueDefinition) error {
	defer c.snapshot.forget() // after the change: no snapshot taken meanwhile outlives it
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	address := def.Address
	if address == "" {
		address = def.Name
	}
	conf := map[string]any{
		"name":                  def.Name,
		"address":               address,
		"routing-type":          strings.ToUpper(def.RoutingType),
		"durable":               def.Durable,
		"auto-create-address":   true,
		"max-consumers":         def.MaxConsumers,
		"exclusive":             def.Exclusive,
		"last-value":            def.LastValue,
		"purge-on-no-consumers": def.PurgeOnNoConsumers,
		"ring-size":             def.RingSize,
		"enabled":               def.Enabled,
		"auto-delete":           def.AutoDelete,
	}
	if def.Filter != "" {
		conf["filter-string"] = def.Filter
	}
	if def.LastValueKey != "" {
		conf["last-value-key"] = def.LastValueKey
	}
	raw, err := json.Marshal(conf)
	if err != nil {
		return fmt.Errorf("encoding queue %q: %w", def.Name, err)
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "createQueue(java.lang.String,boolean)", string(raw), false); err != nil {
		return fmt.Errorf("creating queue %q on address %q: %w", def.Name, address, err)
	}
	return nil
}

// UpdateQueue changes, in place, the attributes of a queue that the broker's updateQueue
// changes on 2.31 and 2.40: filter, max consumers, exclusive, purge on no consumers, ring size
// and enabled. The broker keeps the queue's messages. Durable, address, last value, last-value
// key and auto delete it ignores there. The routing type it changes, but keeps the queue's
// management object under the old one, which outlives the queue (2.31.2 and 2.40.0): a queue
// found by name then still seems to exist once deleted. So the routing type is not sent here;
// like the others it needs a new queue.
func (c *Client) UpdateQueue(ctx context.Context, def QueueDefinition) error {
	defer c.snapshot.forget() // after the change: no snapshot taken meanwhile outlives it
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	conf := map[string]any{
		"name":                  def.Name,
		"filter-string":         def.Filter,
		"max-consumers":         def.MaxConsumers,
		"exclusive":             def.Exclusive,
		"purge-on-no-consumers": def.PurgeOnNoConsumers,
		"ring-size":             def.RingSize,
		"enabled":               def.Enabled,
	}
	raw, err := json.Marshal(conf)
	if err != nil {
		return fmt.Errorf("encoding queue %q: %w", def.Name, err)
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "updateQueue(java.lang.String)", string(raw)); err != nil {
		if errors.Is(err, errQueueMissing) {
			return fmt.Errorf("updating queue %q: %w", def.Name, ErrNotFound)
		}
		return fmt.Errorf("updating queue %q: %w", def.Name, err)
	}
	return nil
}

// DeleteQueue deletes a queue with whatever messages it holds, closing its consumers, and
// leaves its address in place (an address of its own is another object's to delete).
func (c *Client) DeleteQueue(ctx context.Context, name string) error {
	defer c.snapshot.forget() // after the change: no snapshot taken meanwhile outlives it
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	c.queueMBeans.forget(name)
	if _, err := c.exec(ctx, brokerMBean(broker), "destroyQueue(java.lang.String,boolean,boolean)", name, true, false); err != nil {
		if errors.Is(err, errQueueMissing) {
			return fmt.Errorf("deleting queue %q: %w", name, ErrNotFound)
		}
		return fmt.Errorf("deleting queue %q: %w", name, err)
	}
	return nil
}

// StoredMessages is what a queue holds, as the broker tells it two ways.
type StoredMessages struct {
	// Counted is the queue's MessageCount.
	Counted int64
	// Listed is how many messages the broker's listing shows (at most its
	// management-browse-page-size), read only when Counted is 0: the count can miss a message
	// the broker stores but failed to convert for a consumer, which the listing still shows.
	Listed int
}

// Empty reports whether neither the count nor the listing sees a message.
func (s StoredMessages) Empty() bool { return s.Counted == 0 && s.Listed == 0 }

// StoredMessages reads whether a queue holds messages, by its count and, when that is 0, its
// listing. A missing queue gives an error that wraps ErrNotFound.
func (c *Client) StoredMessages(ctx context.Context, queue string) (StoredMessages, error) {
	n, err := c.QueueDepth(ctx, queue)
	if err != nil || n > 0 {
		return StoredMessages{Counted: n}, err
	}
	left, err := c.ListMessages(ctx, queue, "")
	if err != nil {
		return StoredMessages{}, err
	}
	return StoredMessages{Listed: len(left)}, nil
}

// Producer is a producer attached to a broker, as its listProducersInfoAsJSON lists it.
type Producer struct {
	Name         string
	ConnectionID string
	// Destination is the address (or address::queue) the producer's link names; empty for an
	// anonymous producer, which names one with each message.
	Destination string
}

// QueueProducers lists the producers attached to the queue's address or to the queue itself
// (address::queue). Anonymous producers name no destination and are not listed.
func (c *Client) QueueProducers(ctx context.Context, address, queue string) ([]Producer, error) {
	all, err := snapshotted(ctx, c, "producers", c.allProducers)
	if err != nil {
		return nil, fmt.Errorf("listing the producers of queue %q: %w", queue, err)
	}
	var out []Producer
	for _, p := range all {
		if p.Destination == address || p.Destination == FQQN(address, queue) {
			out = append(out, p)
		}
	}
	return out, nil
}

// allProducers lists every producer of the broker that names its destination.
func (c *Client) allProducers(ctx context.Context) ([]Producer, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := c.exec(ctx, brokerMBean(broker), "listProducersInfoAsJSON()")
	if err != nil {
		return nil, err
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, fmt.Errorf("broker %q: decoding the producer list: %w", c.cfg.Name, err)
	}
	var rows []struct {
		Name         string  `json:"name"`
		ConnectionID string  `json:"connectionID"`
		Destination  *string `json:"destination"`
	}
	if err := json.Unmarshal([]byte(text), &rows); err != nil {
		return nil, fmt.Errorf("broker %q: decoding the producer list: %w", c.cfg.Name, err)
	}
	var all []Producer
	for _, row := range rows {
		if row.Destination != nil {
			all = append(all, Producer{Name: row.Name, ConnectionID: row.ConnectionID, Destination: *row.Destination})
		}
	}
	return all, nil
}

// DeleteEmptyQueueHooks are points of DeleteEmptyQueue at which a test acts; nil ones are
// skipped.
type DeleteEmptyQueueHooks struct {
	// BeforeStop runs once the first count and the producer list found the queue idle, before
	// the queue's address is blocked.
	BeforeStop func()
	// BeforeCheck runs once the address is blocked, before the exact check.
	BeforeCheck func()
}

func reach(point func()) {
	if point != nil {
		point()
	}
}

// DeleteEmptyQueue deletes a queue only when it holds no message, and leaves it as it was
// otherwise, with a *QueueInUseError. A queue that producers send to (by its address or its
// fully qualified name) is left in place too. Between the check and the deletion the broker
// must store nothing more in the queue, and must drop nothing sent to it, so the queue's
// address is blocked first (the broker grants its producers no new credit: a send waits, it is
// not dropped; a message sent on credit granted before is routed to the queue, still enabled,
// and its producer is attached), then the producers are listed again and the queue's executor
// flushed and the queue checked exactly (count and listing); the address is unblocked at the
// end whatever the outcome. A producer still waiting then sends to a queue that is gone, as it
// would after any deletion.
func (c *Client) DeleteEmptyQueue(ctx context.Context, name string, hooks DeleteEmptyQueueHooks) error {
	defer c.snapshot.forget() // after the change: no snapshot taken meanwhile outlives it
	q, err := c.Queue(ctx, name)
	if err != nil {
		return err
	}
	inUse := func(stored StoredMessages, producers []Producer) *QueueInUseError {
		if stored.Empty() && len(producers) == 0 {
			return nil
		}
		return &QueueInUseError{Broker: c.cfg.Name, Queue: name, Address: q.Address, Stored: stored, Producers: len(producers)}
	}
	// Producers are listed with the list* management permission; a user without it still
	// gets the exact check, which is what keeps stored messages.
	producers, err := c.QueueProducers(ctx, q.Address, name)
	if err != nil && !errors.Is(err, ErrForbidden) {
		return fmt.Errorf("deleting queue %q: %w", name, err)
	}
	if e := inUse(StoredMessages{Counted: q.MessageCount}, producers); e != nil {
		return e
	}
	reach(hooks.BeforeStop)
	if err := c.blockAddress(ctx, q.Address, true); err != nil {
		return fmt.Errorf("deleting queue %q: blocking its address %q before the last check: %w", name, q.Address, err)
	}
	unblock := func(cause error) error {
		if err := c.blockAddress(context.WithoutCancel(ctx), q.Address, false); err != nil {
			err = fmt.Errorf("the address %q was left blocked (its producers wait), and unblocking it failed: %v. "+
				"Unblock it: the unblock operation of the address in the broker's management (Jolokia or the console)", q.Address, err)
			if cause == nil {
				return fmt.Errorf("queue %q was deleted; %w", name, err)
			}
			return fmt.Errorf("%w; %w", cause, err)
		}
		return cause
	}
	reach(hooks.BeforeCheck)
	// Listed before the check: a producer whose link went away since had its messages routed
	// before its detach, and the check that follows sees them.
	producers, err = c.QueueProducers(ctx, q.Address, name)
	if err != nil && !errors.Is(err, ErrForbidden) {
		return unblock(fmt.Errorf("deleting queue %q: %w", name, err))
	}
	// A routed message is taken in, and counted, by the queue's own executor a moment later.
	if err := c.flushQueueExecutor(ctx, name); err != nil {
		return unblock(fmt.Errorf("deleting queue %q: %w", name, err))
	}
	stored, err := c.StoredMessages(ctx, name)
	if err != nil {
		return unblock(fmt.Errorf("deleting queue %q: %w", name, err))
	}
	if e := inUse(stored, producers); e != nil {
		return unblock(e)
	}
	return unblock(c.DeleteQueue(ctx, name))
}

// blockAddress blocks (or unblocks) the producers of an address: while blocked, the broker
// grants them no credit, so their sends wait rather than fail or drop.
func (c *Client) blockAddress(ctx context.Context, address string, block bool) error {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	op := "unblock()"
	if block {
		op = "block()"
	}
	if _, err := c.exec(ctx, addressMBean(broker, address), op); err != nil {
		return fmt.Errorf("%s address %q: %w", strings.TrimSuffix(op, "()"), address, err)
	}
	return nil
}

// flushQueueExecutor waits for the queue's executor to take in what the broker routed to it.
func (c *Client) flushQueueExecutor(ctx context.Context, queue string) error {
	err := c.onQueue(ctx, queue, func(mbean string) error {
		_, err := c.exec(ctx, mbean, "flushExecutor()")
		return err
	})
	if err != nil {
		return fmt.Errorf("flushing the executor of queue %q: %w", queue, err)
	}
	return nil
}
