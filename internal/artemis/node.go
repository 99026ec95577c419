package artemis

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// nodeAt is the node an AMQP URL reached.
type nodeAt struct {
	URL    string // without credentials
	NodeID string // empty when the broker did not say
}

func nodeName(id string) string {
	if id == "" {
		return "(unknown: the broker gave no node id)"
	}
	return id
}

// nodeIDOf returns an AMQP container-id when it is an Artemis node id (a UUID, as recent Artemis
// versions send, 2.40 among them), else "": older brokers send their configured name, which two
// nodes may share.
func nodeIDOf(containerID string) string {
	if len(containerID) != 36 {
		return ""
	}
	for i, r := range containerID {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return ""
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return ""
			}
		}
	}
	return containerID
}

// URLNode is what dialing one AMQP URL showed.
type URLNode struct {
	URL    string // without credentials
	NodeID string // the node reached; empty when Err is set or the broker did not say
	Err    error  // why the URL did not open
}

// ProbeNodes dials every AMQP URL of the broker at once, reads the node each reaches, and closes
// the connections; the result is in the configured order. It tells apart URLs that reach the
// management node (or a backup sharing its journal) from URLs that reach other nodes, which
// ConnectTo would skip. Each dial is bounded by the connect timeout and ctx.
//
// The answer is used again for brokerInfoMaxAge, as BrokerInfo's: a plan reads it for every
// transfer, and each probe opens a connection per URL (a login, and a connect timeout for a URL
// that does not answer).
func (c *Client) ProbeNodes(ctx context.Context) []URLNode {
	c.urlNodes.mu.Lock()
	defer c.urlNodes.mu.Unlock()
	if !c.urlNodes.at.IsZero() && time.Since(c.urlNodes.at) <= brokerInfoMaxAge {
		return slices.Clone(c.urlNodes.nodes)
	}
	out := c.probeNodes(ctx)
	if ctx.Err() == nil { // an answer cut short by ctx says nothing of the URLs
		c.urlNodes.nodes, c.urlNodes.at = slices.Clone(out), time.Now()
	}
	return out
}

// urlNodesCache is ProbeNodes' last answer and when it was made.
type urlNodesCache struct {
	mu    sync.Mutex
	nodes []URLNode
	at    time.Time // zero: nothing cached
}

func (c *Client) probeNodes(ctx context.Context) []URLNode {
	out := make([]URLNode, len(c.cfg.AMQPURLs))
	var wg sync.WaitGroup
	for i, raw := range c.cfg.AMQPURLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, shown, nodeID, err := c.dialOne(ctx, raw)
			out[i] = URLNode{URL: redactURL(shown), NodeID: nodeID, Err: err}
			if err == nil {
				_ = conn.Close()
			}
		}()
	}
	wg.Wait()
	return out
}
