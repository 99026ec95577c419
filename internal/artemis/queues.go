package artemis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// QueueInfo is what a broker says about one queue.
type QueueInfo struct {
	Name        string
	Address     string
	RoutingType string // ANYCAST or MULTICAST
	Filter      string
	Durable     bool
	Temporary   bool
	// Internal says the queue is the broker's own (its internalQueue flag, 2.34 and later).
	Internal   bool
	AutoDelete bool
	RingSize   int64 // -1: not a ring queue
	// LastValue is the broker's last-value flag. A queue created with only a last-value key
	// behaves as a last-value queue too, yet 2.40 reports LastValue false for it (2.31 true):
	// test IsLastValue, not this field.
	LastValue bool
	// LastValueKey is the property that groups a last-value queue's messages; empty when the
	// queue names none (a LastValue queue then groups by _AMQ_LVQ_NAME).
	LastValueKey       string
	Exclusive          bool
	Paused             bool
	Enabled            bool
	PurgeOnNoConsumers bool
	MaxConsumers       int
	MessageCount       int64 // includes scheduled, paged and in-delivery messages
	PersistentSize     int64 // bytes of the queue's messages
	ScheduledCount     int64
	DeliveringCount    int64
	ConsumerCount      int
	// MessagesAcknowledged, MessagesExpired and MessagesKilled count, since the broker
	// started, the messages that left the queue by each way out; with MessageCount they tell
	// whether any left it meanwhile.
	MessagesAcknowledged, MessagesExpired, MessagesKilled int64
	// MessagesAdded counts, since the broker started, the messages the queue took; a message
	// the broker accepted from a producer and routed to no queue (a queue of the other routing
	// type, say) leaves it unchanged.
	MessagesAdded int64
}

// MessagesRemoved is how many messages have left the queue since the broker started:
// acknowledged (consumed, moved, removed), expired or killed.
func (q QueueInfo) MessagesRemoved() int64 {
	return q.MessagesAcknowledged + q.MessagesExpired + q.MessagesKilled
}

// FQQN is the queue's fully qualified name, address::queue.
func (q QueueInfo) FQQN() string { return FQQN(q.Address, q.Name) }

// FQQN is the fully qualified name of a queue on an address, address::queue: the name a
// sender, receiver or browser uses to reach that one queue rather than every queue of the address.
func FQQN(address, queue string) string { return address + "::" + queue }

// IsLastValue reports whether the queue replaces a queued message with a new one of the same
// key: by its flag or by a last-value key alone, as the broker does.
func (q QueueInfo) IsLastValue() bool { return q.LastValue || q.LastValueKey != "" }

// attribute. Each request costs the broker CPU (on 2.40 over a kept-alive connection: 0.7-0.9
// ms for this read, 1.5-2.2 ms for Queue's two), and a run reads its staging queue's depth once
// per staging move.
// A missing queue gives an error that wraps ErrNotFound.
func (c *Client) QueueDepth(ctx context.Context, queue string) (int64, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return 0, err
	}
	pattern := queueMBeanPattern(broker, queue)
	resps, err := c.jolokia(ctx, jolokiaRequest{Type: "read", MBean: pattern, Attribute: []string{"MessageCount"}})
	if err != nil {
		return 0, err
	}
	r := resps[0]
	if r.Status != http.StatusOK {
		err := c.responseError("reading the depth of queue "+queue, r)
		if errors.Is(err, ErrNotFound) {
			return 0, fmt.Errorf("broker %q: queue %q does not exist: %w", c.cfg.Name, queue, ErrNotFound)
		}
		return 0, err
	}
	// A read by pattern answers with the attributes of each MBean that matched, by its name; a
	// queue's name is unique on a broker, so one matched.
	var byMBean map[string]struct {
		MessageCount *int64
	}
	if err := json.Unmarshal(r.Value, &byMBean); err != nil {
		return 0, fmt.Errorf("broker %q: decoding the depth of queue %q: %w", c.cfg.Name, queue, err)
	}
	for _, v := range byMBean {
		if v.MessageCount == nil {
			break
		}
		return *v.MessageCount, nil
	}
	return 0, fmt.Errorf("broker %q: reading the depth of queue %q: no MessageCount in %.200s", c.cfg.Name, queue, r.Value)
}

// queueAttributes are the attributes Queue reads.
var queueAttributes = []string{"Name", "Address", "RoutingType", "Filter", "Durable", "Temporary", "AutoDelete",
	"RingSize", "LastValue", "LastValueKey", "Exclusive", "Paused", "Enabled", "PurgeOnNoConsumers", "MaxConsumers",
	"MessageCount", "PersistentSize", "ScheduledCount", "DeliveringCount", "ConsumerCount",
	"MessagesAcknowledged", "MessagesExpired", "MessagesKilled", "MessagesAdded", "InternalQueue"}

// Queue reads a queue's facts. A missing queue gives an error that wraps ErrNotFound.
func (c *Client) Queue(ctx context.Context, queue string) (QueueInfo, error) {
	if q, ok, err := c.snapshotQueue(ctx, queue); ok {
		return q, err
	}
	var v map[string]json.RawMessage
	err := c.onQueue(ctx, queue, func(mbean string) (err error) {
		v, err = c.read(ctx, mbean, queueAttributes...)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return QueueInfo{}, fmt.Errorf("broker %q: queue %q does not exist: %w", c.cfg.Name, queue, ErrNotFound)
		}
		return QueueInfo{}, fmt.Errorf("reading queue %q: %w", queue, err)
	}
	q, err := decodeQueueInfo(v)
	if err != nil {
		return QueueInfo{}, fmt.Errorf("broker %q: reading queue %q: %w", c.cfg.Name, queue, err)
	}
	return q, nil
}

// decodeQueueInfo decodes the queueAttributes of one queue MBean.
func decodeQueueInfo(v map[string]json.RawMessage) (QueueInfo, error) {
	q := QueueInfo{RingSize: -1, Enabled: true, MaxConsumers: -1}
	d := attrDecoder{values: v}
	d.str("Name", &q.Name)
	d.str("Address", &q.Address)
	d.str("RoutingType", &q.RoutingType)
	d.str("Filter", &q.Filter)
	d.boolean("Durable", &q.Durable)
	d.boolean("Temporary", &q.Temporary)
	d.boolean("InternalQueue", &q.Internal)
	d.boolean("AutoDelete", &q.AutoDelete)
	d.int64("RingSize", &q.RingSize)
	d.boolean("LastValue", &q.LastValue)
	d.str("LastValueKey", &q.LastValueKey)
	d.boolean("Exclusive", &q.Exclusive)
	d.boolean("Paused", &q.Paused)
	d.boolean("Enabled", &q.Enabled)
	d.boolean("PurgeOnNoConsumers", &q.PurgeOnNoConsumers)
	d.integer("MaxConsumers", &q.MaxConsumers)
	d.int64("MessageCount", &q.MessageCount)
	d.int64("PersistentSize", &q.PersistentSize)
	d.int64("ScheduledCount", &q.ScheduledCount)
	d.int64("DeliveringCount", &q.DeliveringCount)
	d.integer("ConsumerCount", &q.ConsumerCount)
	d.int64("MessagesAcknowledged", &q.MessagesAcknowledged)
	d.int64("MessagesExpired", &q.MessagesExpired)
	d.int64("MessagesKilled", &q.MessagesKilled)
	d.int64("MessagesAdded", &q.MessagesAdded)
	if d.err != nil {
		return QueueInfo{}, d.err
	}
	q.RoutingType = strings.ToUpper(q.RoutingType)
	return q, nil
}

// explicit, so nothing comes from address-setting defaults by accident.
type QueueSpec struct {
	Name               string
	Address            string // empty: the queue's own name
	RoutingType        string // ANYCAST (default) or MULTICAST
	Durable            bool
	Filter             string
	RingSize           int64 // -1: no ring
	LastValue          bool
	LastValueKey       string // the property that groups a last-value queue's messages
	PurgeOnNoConsumers bool
	AutoDelete         bool
	Exclusive          bool
	MaxConsumers       int // -1: unlimited
}

// CreateQueue creates a queue (and its address when missing). With ignoreIfExists false an
// existing queue is an error.
func (c *Client) CreateQueue(ctx context.Context, spec QueueSpec, ignoreIfExists bool) error {
	defer c.snapshot.forget() // after the change: no snapshot taken meanwhile outlives it
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	address := spec.Address
	if address == "" {
		address = spec.Name
	}
	routing := strings.ToUpper(spec.RoutingType)
	if routing == "" {
		routing = "ANYCAST"
	}
	conf := map[string]any{
		"name":                  spec.Name,
		"address":               address,
		"routing-type":          routing,
		"durable":               spec.Durable,
		"auto-create-address":   true,
		"auto-delete":           spec.AutoDelete,
		"ring-size":             spec.RingSize,
		"last-value":            spec.LastValue,
		"purge-on-no-consumers": spec.PurgeOnNoConsumers,
		"exclusive":             spec.Exclusive,
		"enabled":               true,
		"max-consumers":         spec.MaxConsumers,
		"non-destructive":       false,
	}
	if spec.Filter != "" {
		conf["filter-string"] = spec.Filter
	}
	if spec.LastValueKey != "" {
		conf["last-value-key"] = spec.LastValueKey
	}
	raw, err := json.Marshal(conf)
	if err != nil {
		return fmt.Errorf("encoding queue %q: %w", spec.Name, err)
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "createQueue(java.lang.String,boolean)", string(raw), ignoreIfExists); err != nil {
		return fmt.Errorf("creating queue %q on address %q: %w", spec.Name, address, err)
	}
	return nil
}

// DestroyQueue deletes a queue with its messages, its consumers, and its address when no other
// queue is bound to it.
func (c *Client) DestroyQueue(ctx context.Context, queue string) error {
	defer c.snapshot.forget() // after the change: no snapshot taken meanwhile outlives it
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	// Whatever the outcome, the queue's MBean name is looked up again next time.
	c.queueMBeans.forget(queue)
	if _, err := c.exec(ctx, brokerMBean(broker), "destroyQueue(java.lang.String,boolean,boolean)", queue, true, true); err != nil {
		if errors.Is(err, errQueueMissing) {
			return fmt.Errorf("destroying queue %q: %w", queue, ErrNotFound)
		}
		return fmt.Errorf("destroying queue %q: %w", queue, err)
	}
	return nil
}

// QueueSummary is one row of ListQueues.
type QueueSummary struct {
	Name          string
	Address       string
	RoutingType   string
	MessageCount  int64
	ConsumerCount int
	Durable       bool
	// Temporary queues belong to one client connection and go with it.
	Temporary bool
	// Internal queues are the broker's own (cluster store-and-forward, MQTT sessions, ...):
	// the broker's internalQueue flag (2.34 and later), or a $.artemis.internal. name.
	Internal bool
}

// internalQueuePrefix starts the names of the broker's internal queues, such as a cluster
// connection's store-and-forward queues, on brokers that do not flag them.
const internalQueuePrefix = "$.artemis.internal."

// listQueuesPageSize bounds one listQueues response.
const listQueuesPageSize = 500

// ListQueues lists the queues whose names start with prefix (every queue when prefix is empty),
// sorted by name.
func (c *Client) ListQueues(ctx context.Context, prefix string) ([]QueueSummary, error) {
	if snapshotMaxAge(ctx) > 0 {
		if queues, err := snapshotted(ctx, c, "queues", c.readAllQueues); err == nil {
			return summaries(queues, prefix), nil
		}
	}
	return c.listQueues(ctx, prefix)
}

// summaries lists, sorted by name, the queues whose names start with prefix.
func summaries(queues map[string]QueueInfo, prefix string) []QueueSummary {
	var out []QueueSummary
	for name, q := range queues {
		if strings.HasPrefix(name, prefix) {
			out = append(out, QueueSummary{Name: name, Address: q.Address, RoutingType: q.RoutingType, MessageCount: q.MessageCount,
				ConsumerCount: q.ConsumerCount, Durable: q.Durable, Temporary: q.Temporary,
				Internal: q.Internal || strings.HasPrefix(name, internalQueuePrefix)})
		}
	}
	slices.SortFunc(out, func(a, b QueueSummary) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (c *Client) listQueues(ctx context.Context, prefix string) ([]QueueSummary, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return nil, err
	}
	// With options the broker needs all three keys; empty values mean "every queue" (an empty
	// object fails in the broker with a NullPointerException).
	options := map[string]any{"field": "name", "operation": "CONTAINS", "value": prefix}
	if prefix == "" {
		options = map[string]any{"field": "", "operation": "", "value": ""}
	}
	optJSON, _ := json.Marshal(options)
	var out []QueueSummary
	// The page count is bounded by the total the broker reports; the cap guards a broker that
	// keeps growing the list while we read it.
	for page := 1; page <= 10_000; page++ {
		raw, err := c.exec(ctx, brokerMBean(broker), "listQueues(java.lang.String,int,int)", string(optJSON), page, listQueuesPageSize)
		if err != nil {
			return nil, fmt.Errorf("listing queues: %w", err)
		}
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, fmt.Errorf("broker %q: decoding queue list: %w", c.cfg.Name, err)
		}
		var result struct {
			Data  []map[string]any `json:"data"`
			Count int              `json:"count"`
		}
		if err := json.Unmarshal([]byte(text), &result); err != nil {
			return nil, fmt.Errorf("broker %q: decoding queue list: %w", c.cfg.Name, err)
		}
		for _, row := range result.Data {
			name := fmt.Sprint(row["name"])
			if !strings.HasPrefix(name, prefix) {
				continue
			}
			out = append(out, QueueSummary{
				Name:          name,
				Address:       fmt.Sprint(row["address"]),
				RoutingType:   strings.ToUpper(fmt.Sprint(row["routingType"])),
				MessageCount:  parseInt64(row["messageCount"]),
				ConsumerCount: int(parseInt64(row["consumerCount"])),
				Durable:       fmt.Sprint(row["durable"]) == "true",
				Temporary:     fmt.Sprint(row["temporary"]) == "true",
				Internal:      fmt.Sprint(row["internalQueue"]) == "true" || strings.HasPrefix(name, internalQueuePrefix),
			})
		}
		if len(result.Data) < listQueuesPageSize || page*listQueuesPageSize >= result.Count {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// parseInt64 reads a number that listQueues may give as a string or a number.
func parseInt64(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// attrDecoder decodes typed attributes from a Jolokia read, keeping the first error. Attributes
