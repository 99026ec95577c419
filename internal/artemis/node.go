package artemis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrWrongNode: the AMQP URLs opened, but on broker nodes other than the one required
// (Client.ConnectTo). Another node has neither the node's queues nor its duplicate-id cache, so
// nothing may be sent to or received from it in the node's stead. The error is a
// *WrongNodeError, which also matches ErrUnreachable: the required node, or a backup sharing its
// journal, may come back.
var ErrWrongNode = errors.New("wrong broker node")

// NodeAt is the node an AMQP URL reached.
type NodeAt struct {
	URL    string // without credentials
	NodeID string // empty when the broker did not say
}

// WrongNodeError says which URLs reached which other nodes when node Want was required.
type WrongNodeError struct {
	Broker string // the operator's name for the broker
	Want   string
	Found  []NodeAt
}

func (e *WrongNodeError) Error() string {
	reached := make([]string, len(e.Found))
	for i, f := range e.Found {
		reached[i] = f.URL + " reaches node " + nodeName(f.NodeID)
	}
	return fmt.Sprintf("connecting to broker %q: %s, not node %s, the one required: only that node, or a backup sharing its journal, "+
		"holds the messages and duplicate ids this connection needs", e.Broker, strings.Join(reached, ", "), e.Want)
}

// Is makes a WrongNodeError match ErrWrongNode and ErrUnreachable.
func (e *WrongNodeError) Is(target error) bool {
	return target == ErrWrongNode || target == ErrUnreachable
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
			out[i] = URLNode{URL: RedactURL(shown), NodeID: nodeID, Err: err}
			if err == nil {
				_ = conn.Close()
			}
		}()
	}
	wg.Wait()
	return out
}
