package artemis

import (
	"context"
	"fmt"
)

// HeapUsage is the broker JVM's heap, in bytes, as java.lang:type=Memory reports it.
type HeapUsage struct {
	// Used includes objects no collection has reclaimed yet, so it overstates what the heap
	// keeps; it drops as the JVM collects.
	Used int64
	// Max is the most the heap may grow to (-Xmx); 0 when the JVM reports none.
	Max int64
}

// Percent is Used as a percentage of Max, 0 when Max is unknown.
func (h HeapUsage) Percent() int {
	if h.Max <= 0 {
		return 0
	}
	return int(h.Used * 100 / h.Max)
}

// heapMBean is the JVM's memory MBean; reading it needs get* on it (management.xml's
// default-access covers it unless a role-access match for java.lang says otherwise).
const heapMBean = "java.lang:type=Memory"

// Heap reads the broker JVM's heap usage: one Jolokia read, cheap enough to poll.
func (c *Client) Heap(ctx context.Context) (HeapUsage, error) {
	return snapshotted(ctx, c, "heap", c.readHeap)
}

func (c *Client) readHeap(ctx context.Context) (HeapUsage, error) {
	v, err := c.read(ctx, heapMBean, "HeapMemoryUsage")
	if err != nil {
		return HeapUsage{}, fmt.Errorf("reading the heap of broker %q: %w", c.cfg.Name, err)
	}
	var usage struct {
		Used int64 `json:"used"`
		Max  int64 `json:"max"`
	}
	d := attrDecoder{values: v}
	d.decode("HeapMemoryUsage", &usage)
	if d.err != nil {
		return HeapUsage{}, fmt.Errorf("broker %q: heap usage: %w", c.cfg.Name, d.err)
	}
	// The JVM reports -1 for a heap without a maximum.
	return HeapUsage{Used: usage.Used, Max: max(usage.Max, 0)}, nil
}

// GlobalMemory is the broker's global paging limit and what its addresses hold in memory now.
type GlobalMemory struct {
	// MaxSize is global-max-size in bytes: every address pages once the broker's addresses hold
	// this much in memory; -1 or 0: no global limit.
	MaxSize int64
	// Used is what the broker's addresses hold in memory now (AddressMemoryUsage).
	Used int64
}

// GlobalMemory reads the broker's global-max-size and its address memory usage.
func (c *Client) GlobalMemory(ctx context.Context) (GlobalMemory, error) {
	return snapshotted(ctx, c, "global memory", c.readGlobalMemory)
}

func (c *Client) readGlobalMemory(ctx context.Context) (GlobalMemory, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return GlobalMemory{}, err
	}
	v, err := c.read(ctx, brokerMBean(broker), "GlobalMaxSize", "AddressMemoryUsage")
	if err != nil {
		return GlobalMemory{}, fmt.Errorf("reading the global-max-size of broker %q: %w", c.cfg.Name, err)
	}
	g := GlobalMemory{MaxSize: -1}
	d := attrDecoder{values: v}
	d.int64("GlobalMaxSize", &g.MaxSize)
	d.int64("AddressMemoryUsage", &g.Used)
	if d.err != nil {
		return GlobalMemory{}, fmt.Errorf("broker %q: global memory: %w", c.cfg.Name, d.err)
	}
	return g, nil
}
