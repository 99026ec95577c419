package artemis

import (
	"context"
	"strings"
	"sync"
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
func (c *Client) ProbeNodes(ctx context.Context) []URLNode {
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
