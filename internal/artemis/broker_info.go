package artemis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BrokerInfo is what a broker says about itself.
type BrokerInfo struct {
	Version         string
	Name            string
	NodeID          string
	SecurityEnabled bool
	Clustered       bool
	IDCacheSize     int
	// PersistIDCache false: the duplicate-id cache is lost when the broker restarts.
	PersistIDCache bool
	// PersistenceEnabled false: the broker keeps messages in memory only.
	PersistenceEnabled bool
	ManagementAddress  string
}

// brokerInfoMaxAge bounds how long a BrokerInfo read is used again. What it holds is fixed for
// the life of a broker process (its version, node id, and settings the broker reads at start
// only), and a move or a plan asks for it up to ten times within seconds; a broker restarted with
// another configuration, or another broker behind the same URL, is read afresh after this long,
// or at once after a request found the endpoint unreachable.
const brokerInfoMaxAge = 10 * time.Second

// brokerInfoCache is the last BrokerInfo read and when.
type brokerInfoCache struct {
	// reading is held while the broker is read.
	reading sync.Mutex
	mu      sync.Mutex
	info    BrokerInfo
	at      time.Time // zero: nothing cached
}

func (b *brokerInfoCache) get() (BrokerInfo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.at.IsZero() || time.Since(b.at) > brokerInfoMaxAge {
		return BrokerInfo{}, false
	}
	return b.info, true
}

func (b *brokerInfoCache) put(info BrokerInfo) {
	b.mu.Lock()
	b.info, b.at = info, time.Now()
	b.mu.Unlock()
}

func (b *brokerInfoCache) forget() {
	b.mu.Lock()
	b.at = time.Time{}
	b.mu.Unlock()
}

// BrokerInfo reads the broker's identity and the settings a transfer depends on (again at most
// every brokerInfoMaxAge).
func (c *Client) BrokerInfo(ctx context.Context) (BrokerInfo, error) {
	if info, ok := c.info.get(); ok {
		return info, nil
	}
	// One read at a time: the checks of many transfers ask at once, and those that waited find
	// the answer of the first.
	c.info.reading.Lock()
	defer c.info.reading.Unlock()
	if info, ok := c.info.get(); ok {
		return info, nil
	}
	info, err := c.readBrokerInfo(ctx)
	if err == nil {
		c.info.put(info)
	}
	return info, err
}

func (c *Client) readBrokerInfo(ctx context.Context) (BrokerInfo, error) {
	name, err := c.brokerName(ctx)
	if err != nil {
		return BrokerInfo{}, err
	}
	v, err := c.read(ctx, brokerMBean(name), "Version", "Name", "NodeID", "SecurityEnabled", "Clustered",
		"IDCacheSize", "PersistIDCache", "PersistenceEnabled", "ManagementAddress")
	if err != nil {
		return BrokerInfo{}, err
	}
	// Both flags default to true in the broker; an attribute the broker leaves out keeps it.
	info := BrokerInfo{PersistIDCache: true, PersistenceEnabled: true}
	d := attrDecoder{values: v}
	d.str("Version", &info.Version)
	d.str("Name", &info.Name)
	d.str("NodeID", &info.NodeID)
	d.boolean("SecurityEnabled", &info.SecurityEnabled)
	d.boolean("Clustered", &info.Clustered)
	d.integer("IDCacheSize", &info.IDCacheSize)
	d.boolean("PersistIDCache", &info.PersistIDCache)
	d.boolean("PersistenceEnabled", &info.PersistenceEnabled)
	d.str("ManagementAddress", &info.ManagementAddress)
	if d.err != nil {
		return BrokerInfo{}, fmt.Errorf("broker %q: reading broker attributes: %w", c.cfg.Name, d.err)
	}
	if info.Name == "" {
		// Artemis 2.18 has no Name attribute; its MBean is named after the same configured name.
		info.Name = name
	}
	return info, nil
}

// VersionAtLeast reports whether a broker version string such as "2.40.0" is at least major.minor.
func VersionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// ManagedConnectors reports whether a broker of this version adds and removes connectors
// through management: addConnector and removeConnector came with Artemis 2.25.0. Before, a
// bridge can use only a connector of the broker's configuration.
func ManagedConnectors(version string) bool { return VersionAtLeast(version, 2, 25) }

// PersistsManagedBridges reports whether a broker of this version stores a bridge created
// through management and deploys it again when it restarts (2.28.0 and later). An older broker
// forgets it at a restart (2.18 does), and its queue then keeps whatever was not forwarded.
func PersistsManagedBridges(version string) bool { return VersionAtLeast(version, 2, 28) }

// GlobalMemoryPercent is how much of the broker's global-max-size its addresses use.
func (c *Client) GlobalMemoryPercent(ctx context.Context) (int, error) {
	return snapshotted(ctx, c, "global memory percent", c.readGlobalMemoryPercent)
}

func (c *Client) readGlobalMemoryPercent(ctx context.Context) (int, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return 0, err
	}
	v, err := c.read(ctx, brokerMBean(broker), "AddressMemoryUsagePercentage")
	if err != nil {
		return 0, fmt.Errorf("reading the broker's memory usage: %w", err)
	}
	var pct int
	d := attrDecoder{values: v}
	d.integer("AddressMemoryUsagePercentage", &pct)
	return pct, d.err
}

// QueueSpec describes a queue to create. Every field that could make a queue drop messages is
