package artemis_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// managementNodeID reads the node id management reports for a broker of the environment.
func managementNodeID(ctx context.Context, t *testing.T, c *artemis.Client) string {
	t.Helper()
	info, err := c.BrokerInfo(ctx)
	if err != nil {
		t.Fatalf("BrokerInfo: %v", err)
	}
	if info.NodeID == "" {
		t.Fatal("management reports no NodeID")
	}
	return info.NodeID
}

// The node id read from the AMQP Open is the one management reports, on every broker of the
// environment, old and new, over amqp:// and amqps://.
func TestConnect_NodeIDIsTheManagementNodeID(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range []string{"source", "target", "legacy", "node1", "node2"} {
		t.Run(broker, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			b := env.Broker(t, broker)
			c := messagingClient(t, b, env.AdminUser, env.AdminPassword)
			want := managementNodeID(ctx, t, c)
			conn, err := c.Connect(ctx)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer conn.Close()
			if broker == "legacy" {
				// 2.31 sends its configured name as container-id, which identifies no node:
				// NodeID is empty, and ConnectTo cannot check the node and accepts it.
				if conn.NodeID() != "" {
					t.Fatalf("AMQP node id %q on a broker that sends its name", conn.NodeID())
				}
				checked, err := c.ConnectTo(ctx, want)
				if err != nil {
					t.Fatalf("ConnectTo on a broker that gives no node id: %v", err)
				}
				_ = checked.Close()
				return
			}
			if conn.NodeID() != want {
				t.Fatalf("AMQP node id %q, management NodeID %q", conn.NodeID(), want)
			}
		})
	}
	t.Run("target over amqps", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		b := env.Broker(t, "target")
		ca, err := os.ReadFile(env.TLSCAFile)
		if err != nil {
			t.Fatal(err)
		}
		tlsCfg, err := artemis.TLSOptions{CAPEM: string(ca)}.Config()
		if err != nil {
			t.Fatal(err)
		}
		c, err := artemis.New(artemis.Config{Name: "target", AMQPURLs: []string{b.AMQPSURL}, ManagementURL: b.ManagementURL,
			Username: env.AdminUser, Password: env.AdminPassword, TLS: tlsCfg})
		if err != nil {
			t.Fatal(err)
		}
		want := managementNodeID(ctx, t, c)
		conn, err := c.Connect(ctx)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer conn.Close()
		if conn.NodeID() != want {
			t.Fatalf("AMQPS node id %q, management NodeID %q", conn.NodeID(), want)
		}
	})
}

// node1 and node2 are two nodes of one cluster: independent journals, independent duplicate-id
// caches. A client whose management is node1 lists node2's URL first.
func TestConnectTo_SkipsAURLOfAnotherNode(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n1, n2 := env.Broker(t, "node1"), env.Broker(t, "node2")
	c := messagingClient(t, n1, env.AdminUser, env.AdminPassword, n2.AMQPURL, n1.AMQPURL)
	node1 := managementNodeID(ctx, t, c)
	node2 := managementNodeID(ctx, t, messagingClient(t, n2, env.AdminUser, env.AdminPassword))
	if node1 == node2 {
		t.Fatalf("node1 and node2 report the same node id %q", node1)
	}

	// Connect takes the first URL that opens, whichever node it reaches: today's failover shape.
	first, err := c.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if first.URL() != n2.AMQPURL || first.NodeID() != node2 {
		t.Fatalf("Connect reached %s (node %s), want the first URL %s (node %s)", first.URL(), first.NodeID(), n2.AMQPURL, node2)
	}
	_ = first.Close()

	conn, err := c.ConnectTo(ctx, node1)
	if err != nil {
		t.Fatalf("ConnectTo(node1): %v", err)
	}
	defer conn.Close()
	if conn.URL() != n1.AMQPURL || conn.NodeID() != node1 {
		t.Fatalf("ConnectTo(node1) reached %s (node %s), want %s (node %s)", conn.URL(), conn.NodeID(), n1.AMQPURL, node1)
	}

	probes := c.ProbeNodes(ctx)
	if len(probes) != 2 || probes[0].URL != n2.AMQPURL || probes[0].NodeID != node2 || probes[1].URL != n1.AMQPURL || probes[1].NodeID != node1 ||
		probes[0].Err != nil || probes[1].Err != nil {
		t.Fatalf("ProbeNodes = %+v", probes)
	}
}

func TestConnectTo_OnlyAnotherNodeIsAWrongNodeError(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n1, n2 := env.Broker(t, "node1"), env.Broker(t, "node2")
	silent := closedPort(t)
	c := messagingClient(t, n1, env.AdminUser, env.AdminPassword, n2.AMQPURL, "amqp://"+silent)
	node1 := managementNodeID(ctx, t, c)
	node2 := managementNodeID(ctx, t, messagingClient(t, n2, env.AdminUser, env.AdminPassword))

	conn, err := c.ConnectTo(ctx, node1)
	if err == nil {
		_ = conn.Close()
		t.Fatalf("ConnectTo(node1) opened %s (node %s) with only node2's URL", conn.URL(), conn.NodeID())
	}
	var wrong *artemis.WrongNodeError
	if !errors.As(err, &wrong) {
		t.Fatalf("error %v is no *WrongNodeError", err)
	}
	if wrong.Want != node1 || len(wrong.Found) != 1 || wrong.Found[0].URL != n2.AMQPURL || wrong.Found[0].NodeID != node2 {
		t.Fatalf("WrongNodeError = %+v", wrong)
	}
	if !errors.Is(err, artemis.ErrWrongNode) || !errors.Is(err, artemis.ErrUnreachable) {
		t.Fatalf("error %v does not match ErrWrongNode and ErrUnreachable", err)
	}
	for _, want := range []string{n2.AMQPURL + " reaches node " + node2, "not node " + node1, silent} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), env.AdminPassword) {
		t.Errorf("error shows the password: %v", err)
	}
}

// Reconnect keeps the node ConnectTo required: while its URL is gone it reports the other node
// and keeps trying; once the node is back on its URL it reconnects there.
func TestReconnect_StaysOnTheRequiredNode(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n1, n2 := env.Broker(t, "node1"), env.Broker(t, "node2")
	p := testenv.NewProxy(t, strings.TrimPrefix(n1.AMQPURL, "amqp://"))
	viaProxy := "amqp://" + p.Addr()
	c := messagingClient(t, n1, env.AdminUser, env.AdminPassword, viaProxy, n2.AMQPURL)
	node1 := managementNodeID(ctx, t, c)
	conn, err := c.ConnectTo(ctx, node1)
	if err != nil {
		t.Fatalf("ConnectTo(node1): %v", err)
	}
	defer conn.Close()
	if conn.URL() != viaProxy || conn.NodeID() != node1 {
		t.Fatalf("connected on %s (node %s)", conn.URL(), conn.NodeID())
	}
	if err := conn.Reconnect(ctx); err != nil { // the connection is up: nothing to do
		t.Fatalf("Reconnect on a live connection: %v", err)
	}

	p.Down() // node1 is gone; node2 is still up
	// Reconnect does nothing until the connection has noticed the cut; that takes a moment.
	for i := 0; i < 50 && err == nil; i++ {
		waitCtx, waitCancel := context.WithTimeout(ctx, 3*time.Second)
		err = conn.Reconnect(waitCtx)
		waitCancel()
		if err == nil {
			time.Sleep(100 * time.Millisecond)
		}
	}
	var wrong *artemis.WrongNodeError
	if err == nil || !errors.As(err, &wrong) || wrong.Found[0].URL != n2.AMQPURL {
		t.Fatalf("Reconnect while only node2 answers: %v (URL now %s, node %s)", err, conn.URL(), conn.NodeID())
	}

	if err := p.Up(); err != nil { // node1 is back on the same address
		t.Fatal(err)
	}
	if err := conn.Reconnect(ctx); err != nil {
		t.Fatalf("Reconnect once node1 is back: %v", err)
	}
	if conn.URL() != viaProxy || conn.NodeID() != node1 {
		t.Fatalf("reconnected on %s (node %s), want %s (node %s)", conn.URL(), conn.NodeID(), viaProxy, node1)
	}
}
