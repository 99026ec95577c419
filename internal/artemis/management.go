package artemis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

const jmxDomain = "org.apache.activemq.artemis"

// brokerNameCache remembers the discovered JMX broker name; it never changes for a running broker.
type brokerNameCache struct {
	mu   sync.Mutex
	name string
}

// mbeanNames remembers the MBean names of queues by queue name.
type mbeanNames struct {
	mu    sync.Mutex
	names map[string]string
}

func (m *mbeanNames) get(queue string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, ok := m.names[queue]
	return name, ok
}

func (m *mbeanNames) put(queue, mbean string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.names == nil {
		m.names = map[string]string{}
	}
	m.names[queue] = mbean
}

func (m *mbeanNames) forget(queue string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.names, queue)
}

// brokerName returns the JMX broker name, from the configuration or discovered by MBean search.
func (c *Client) brokerName(ctx context.Context) (string, error) {
	if c.cfg.BrokerName != "" {
		return c.cfg.BrokerName, nil
	}
	c.names.mu.Lock()
	defer c.names.mu.Unlock()
	if c.names.name != "" {
		return c.names.name, nil
	}
	found, err := c.search(ctx, jmxDomain+":broker=*")
	if err != nil {
		return "", fmt.Errorf("discovering the broker name: %w", err)
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("broker %q: no Artemis broker MBean at %s: is this an Artemis management endpoint?", c.cfg.Name, c.managementURL())
	case 1:
	default:
		return "", fmt.Errorf("broker %q: %d brokers behind %s: set broker_name to one of them", c.cfg.Name, len(found), c.managementURL())
	}
	c.names.name = objectNameKeys(found[0])["broker"]
	return c.names.name, nil
}

func brokerMBean(broker string) string {
	return jmxDomain + ":broker=" + quoteObjectNameValue(broker)
}

// queueMBeanPattern matches the MBean of a queue known by its name alone, whatever its address
// and routing type (both part of the MBean's name).
func queueMBeanPattern(broker, queue string) string {
	return brokerMBean(broker) + ",component=addresses,address=*,subcomponent=queues,routing-type=*,queue=" + quoteObjectNameValue(queue)
}

func addressMBean(broker, address string) string {
	return brokerMBean(broker) + ",component=addresses,address=" + quoteObjectNameValue(address)
}

// queueMBeanName finds the MBean of a queue by its name alone (its address and routing type are
// part of the name, and a caller usually knows only the queue).
func (c *Client) queueMBeanName(ctx context.Context, queue string) (string, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return "", err
	}
	pattern := queueMBeanPattern(broker, queue)
	found, err := c.search(ctx, pattern)
	if err != nil {
		return "", fmt.Errorf("looking up queue %q: %w", queue, err)
	}
	if len(found) == 0 {
		return "", fmt.Errorf("broker %q: queue %q does not exist: %w", c.cfg.Name, queue, ErrNotFound)
	}
	return found[0], nil
}

// QueueDepth reads a queue's MessageCount in one management request: a read of the queue's

// that are absent (older brokers) leave the target at its default.
type attrDecoder struct {
	values map[string]json.RawMessage
	err    error
}

func (d *attrDecoder) decode(name string, target any) {
	raw, ok := d.values[name]
	if !ok || d.err != nil || string(raw) == "null" {
		return
	}
	if err := json.Unmarshal(raw, target); err != nil {
		d.err = fmt.Errorf("attribute %s: %w", name, err)
	}
}

func (d *attrDecoder) str(name string, target *string)   { d.decode(name, target) }
func (d *attrDecoder) boolean(name string, target *bool) { d.decode(name, target) }
func (d *attrDecoder) integer(name string, target *int)  { d.decode(name, target) }
func (d *attrDecoder) int64(name string, target *int64)  { d.decode(name, target) }

// onQueue runs op on the MBean of a queue known by its name. The MBean's name, found once by a
// search, is remembered for the client's life: a run calls on the same few queues dozens to
// hundreds of times, and each search costs the broker most of a millisecond of CPU. A remembered
// name that no longer answers (the queue deleted, or created again on another address) is looked
// up again and op tried once more: the broker ran nothing for an MBean it does not have.
func (c *Client) onQueue(ctx context.Context, queue string, op func(mbean string) error) error {
	mbean, cached := c.queueMBeans.get(queue)
	if !cached {
		var err error
		if mbean, err = c.queueMBeanName(ctx, queue); err != nil {
			return err
		}
	}
	err := op(mbean)
	if err != nil && cached && errors.Is(err, ErrNotFound) {
		c.queueMBeans.forget(queue)
		if mbean, err = c.queueMBeanName(ctx, queue); err != nil {
			return err
		}
		err = op(mbean)
	}
	if err == nil {
		c.queueMBeans.put(queue, mbean)
	}
	return err
}
