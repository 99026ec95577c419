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
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "destroyQueue(java.lang.String,boolean,boolean)", name, true, false); err != nil {
		if errors.Is(err, errQueueMissing) {
			return fmt.Errorf("deleting queue %q: %w", name, ErrNotFound)
		}
		return fmt.Errorf("deleting queue %q: %w", name, err)
	}
	return nil
}
