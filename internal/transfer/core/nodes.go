package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// ConnectSource opens a connection to the run's source node.
func (r *Worker) ConnectSource(ctx context.Context) (*artemis.Connection, error) {
	return ConnectRunNode(ctx, r.Source, r.Run.RunID, "source", r.Run.SourceNodeID)
}

// ConnectTarget opens a connection to the run's target node.
func (r *Worker) ConnectTarget(ctx context.Context) (*artemis.Connection, error) {
	return ConnectRunNode(ctx, r.Target, r.Run.RunID, "target", r.Run.TargetNodeID)
}

// ConnectRunNode connects to node nodeID of broker c. When the broker's URLs reach only other
// nodes, the error still matches artemis.ErrUnreachable, so the run waits for the node within
// its retry budget as for a broker that is down, then stops with ErrInterrupted.
func ConnectRunNode(ctx context.Context, c *artemis.Client, runID, side, nodeID string) (*artemis.Connection, error) {
	conn, err := c.ConnectTo(ctx, nodeID)
	if errors.Is(err, artemis.ErrWrongNode) {
		return nil, fmt.Errorf("run %s: waiting for the run's %s node; nothing is sent to or received from another node: %w", runID, side, err)
	}
	return conn, err
}

// ConnectManagementNode connects to the node that c's management URL reaches: the node that holds,
// or will hold, the run's queues whatever the order of the broker's AMQP URLs. It serves the
// engine's work without a manifest at hand (finding runs, reading records, returning, the plan's
// probes), so that it never reads from, auto-creates on or probes another node.
func ConnectManagementNode(ctx context.Context, c *artemis.Client) (*artemis.Connection, error) {
	info, err := c.BrokerInfo(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := c.ConnectTo(ctx, info.NodeID)
	if errors.Is(err, artemis.ErrWrongNode) {
		return nil, fmt.Errorf("broker %q: no AMQP URL reaches the node of its management URL (node %s): %w", c.Name(), info.NodeID, err)
	}
	return conn, err
}

// ConnectedTo says which URL and node a connection reached, for the progress report.
func ConnectedTo(conn *artemis.Connection) string {
	node := conn.NodeID()
	if node == "" {
		node = "unknown"
	}
	return fmt.Sprintf("%s at %s (node %s)", conn.Broker(), conn.URL(), node)
}
