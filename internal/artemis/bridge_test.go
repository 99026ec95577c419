package artemis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// bridgeRoute is a bridge of one test: a queue on the broker that hosts the bridge, a queue on
// the target broker reached by its fully qualified name over the target's Core acceptor, and
// the connector and bridge names, which the test's cleanup removes.
type bridgeRoute struct {
	host, target         *artemis.Client
	sourceQueue          string
	targetAddress        string
	targetQueue          string
	connector, bridge    string
	hostName, targetName string
}

func (r bridgeRoute) targetFQQN() string { return artemis.FQQN(r.targetAddress, r.targetQueue) }

// newBridgeRoute creates the two queues and the connector; the bridge is the test's to create.
// The target queue sits on an address of another name, so that only its FQQN reaches it.
func newBridgeRoute(ctx context.Context, t *testing.T, env *testenv.Env, host string, targetRouting string) bridgeRoute {
	t.Helper()
	if v := env.Broker(t, host).Version; !artemis.ManagedConnectors(v) {
		t.Skipf("broker %s is Artemis %s, which adds no connector through management, and the test environment configures none", host, v)
	}
	r := bridgeRoute{
		host:          testenv.Client(t, env, host, true),
		target:        testenv.Client(t, env, "target", true),
		sourceQueue:   testenv.UniqueName("test.bridge.source"),
		targetAddress: testenv.UniqueName("test.bridge.address"),
		targetQueue:   testenv.UniqueName("test.bridge.target"),
		connector:     testenv.UniqueName("test.bridge.connector"),
		bridge:        testenv.UniqueName("test.bridge"),
		hostName:      host,
		targetName:    "target",
	}
	testenv.FixtureQueue(t, ctx, r.host, r.sourceQueue)
	testenv.CreateQueue(t, ctx, r.target, artemis.QueueSpec{Name: r.targetQueue, Address: r.targetAddress, RoutingType: targetRouting,
		Durable: true, RingSize: -1, MaxConsumers: -1})
	if err := r.host.AddConnector(ctx, r.connector, env.Broker(t, "target").CoreURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = r.host.DestroyBridge(ctx, r.bridge)
		_ = r.host.RemoveConnector(ctx, r.connector)
	})
	return r
}

// definition is the bridge a staged move would hand its relay to.
func (r bridgeRoute) definition(env *testenv.Env, duplicateDetection bool) artemis.BridgeDefinition {
	return artemis.BridgeDefinition{
		Name: r.bridge, Queue: r.sourceQueue, ForwardingAddress: r.targetFQQN(), Connectors: []string{r.connector},
		User: env.AdminUser, Password: env.AdminPassword, DuplicateDetection: duplicateDetection,
		ReconnectAttempts: -1, RetryInterval: 200 * time.Millisecond,
	}
}

func (r bridgeRoute) create(ctx context.Context, t *testing.T, def artemis.BridgeDefinition) {
	t.Helper()
	if err := r.host.CreateBridge(ctx, def); err != nil {
		t.Fatal(err)
	}
}

// dupMessage is message id with a duplicate id and an application property of its own.
func dupMessage(id int, dupID string) *amqp.Message {
	m := textMessage(id)
	m.ApplicationProperties = map[string]any{"_AMQ_DUPL_ID": dupID, "color": fmt.Sprintf("c%d", id%3)}
	m.Header = &amqp.MessageHeader{Durable: true}
	return m
}

// waitDrained waits until the bridge's queue is empty (a message leaves it once the target
// confirmed it) and the bridge counts at least acknowledged messages confirmed, and returns the
// bridge's state then.
func (r bridgeRoute) waitDrained(ctx context.Context, t *testing.T, acknowledged int64) artemis.BridgeState {
	t.Helper()
	var s artemis.BridgeState
	var depth int64
	for i := 0; i < 200; i++ {
		var err error
		if depth, err = r.host.QueueDepth(ctx, r.sourceQueue); err != nil {
			t.Fatal(err)
		}
		if s, err = r.host.Bridge(ctx, r.bridge); err != nil {
			t.Fatal(err)
		}
		if depth == 0 && s.Acknowledged >= acknowledged {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("bridge not drained: source depth %d, state %+v: %v", depth, s, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("bridge not drained after 20 s: source depth %d, state %+v", depth, s)
	return s
}

// receiveMessages receives and accepts what a queue holds, until none arrives for a second.
func receiveMessages(ctx context.Context, t *testing.T, conn *artemis.Connection, fqqn string) []*amqp.Message {
	t.Helper()
	rc, err := conn.NewReceiver(ctx, fqqn, artemis.ReceiverOptions{Credit: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close(ctx) }()
	var out []*amqp.Message
	for range 100_000 {
		waitCtx, cancel := context.WithTimeout(ctx, time.Second)
		msg, err := rc.Receive(waitCtx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				t.Fatal(ctx.Err())
			}
			return out
		}
		if err := rc.Accept(ctx, msg); err != nil {
			t.Fatal(err)
		}
		out = append(out, msg)
	}
	t.Fatal("receiveMessages: too many messages")
	return nil
}

// countIDs counts the received messages by message id.
func countIDs(msgs []*amqp.Message) map[string]int {
	n := map[string]int{}
	for _, m := range msgs {
		n[messageID(m)]++
	}
	return n
}

func TestBridge_ForwardsEveryMessageOnceToTheTargetQueueByItsFQQNAndCountsTheAcknowledgements(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"source", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, host string) {
		r := newBridgeRoute(ctx, t, env, host, "ANYCAST")
		const n = 50
		sendMessages(ctx, t, adminConnection(ctx, t, env, host), r.sourceQueue, n, func(id int) *amqp.Message {
			return dupMessage(id, fmt.Sprintf("studio:run1:%d", id))
		})
		r.create(ctx, t, r.definition(env, true))

		s := r.waitDrained(ctx, t, n)
		if s.Acknowledged != n || s.Forwarded != n || !s.Started || !s.DuplicateDetection || s.ForwardingAddress != r.targetFQQN() ||
			s.Queue != r.sourceQueue || !slices.Equal(s.Connectors, []string{r.connector}) || s.ReconnectAttempts != -1 {
			t.Fatalf("bridge state %+v, want started, %d acknowledged, duplicate detection, forwarding to %s from %s over %s",
				s, n, r.targetFQQN(), r.sourceQueue, r.connector)
		}
		got := countIDs(receiveMessages(ctx, t, adminConnection(ctx, t, env, "target"), r.targetFQQN()))
		if len(got) != n {
			t.Fatalf("target received %d distinct messages, want %d", len(got), n)
		}
		for id, k := range got {
			if k != 1 {
				t.Errorf("message %s arrived %d times", id, k)
			}
		}

		if err := r.host.DestroyBridge(ctx, r.bridge); err != nil {
			t.Fatal(err)
		}
		if err := r.host.RemoveConnector(ctx, r.connector); err != nil {
			t.Fatal(err)
		}
		bridges, err := r.host.BridgeNames(ctx)
		if err != nil || slices.Contains(bridges, r.bridge) {
			t.Fatalf("bridges after destroyBridge: %v (%v), want %s gone", bridges, err, r.bridge)
		}
		connectors, err := r.host.ConnectorNames(ctx)
		if err != nil || slices.Contains(connectors, r.connector) {
			t.Fatalf("connectors after removeConnector: %v (%v), want %s gone", connectors, err, r.connector)
		}
		if _, err := r.host.Bridge(ctx, r.bridge); !errors.Is(err, artemis.ErrNotFound) {
			t.Fatalf("Bridge after destroyBridge = %v, want ErrNotFound", err)
		}
	})
}

// The target's duplicate-id check reads a bridge's own duplicate id (_AMQ_BDUP, the source
// node and message id) instead of the message's _AMQ_DUPL_ID whenever the message carries one,
// which a bridge with duplicate detection adds to each message: then messages with the same
// _AMQ_DUPL_ID all arrive, even one whose id the target has seen before. Without the bridge's
// own id the target checks _AMQ_DUPL_ID and drops the repeats.
func TestBridge_DuplicateIDsDropRepeatsOnlyWithoutTheBridgesOwnDuplicateDetection(t *testing.T) {
	env := testenv.Require(t)
	for _, tc := range []struct {
		bridgeDuplicateDetection bool
		want                     map[string]int // arrivals at the target by message id
	}{
		{bridgeDuplicateDetection: true, want: map[string]int{"m-0": 1, "m-1": 1, "m-2": 1, "m-3": 1, "m-4": 1}},
		{bridgeDuplicateDetection: false, want: map[string]int{"m-0": 1, "m-3": 1}},
	} {
		t.Run(fmt.Sprintf("use-duplicate-detection=%t", tc.bridgeDuplicateDetection), func(t *testing.T) {
			onBrokers(t, []string{"source", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, host string) {
				r := newBridgeRoute(ctx, t, env, host, "ANYCAST")
				// m-0 reaches the target directly, as a relay's earlier send of it would have;
				// m-1 and m-2 repeat its duplicate id through the bridge, m-4 repeats m-3's.
				dupIDs := []string{"studio:run1:a", "studio:run1:a", "studio:run1:a", "studio:run1:b", "studio:run1:b"}
				sendMessages(ctx, t, adminConnection(ctx, t, env, "target"), r.targetFQQN(), 1, func(id int) *amqp.Message {
					return dupMessage(0, dupIDs[0])
				})
				// The source drops a repeated duplicate id sent to one address, so the repeats
				// come by a broker-side move that keeps it, as staging moves them.
				conn := adminConnection(ctx, t, env, host)
				side := testenv.UniqueName("test.bridge.side")
				testenv.FixtureQueue(t, ctx, r.host, side)
				sendMessages(ctx, t, conn, r.sourceQueue, 2, func(i int) *amqp.Message { return dupMessage(1+2*i, dupIDs[1+2*i]) })
				sendMessages(ctx, t, conn, side, 2, func(i int) *amqp.Message { return dupMessage(2+2*i, dupIDs[2+2*i]) })
				if moved, err := r.host.MoveMessages(ctx, artemis.MoveRequest{Queue: side, TargetQueue: r.sourceQueue}); err != nil || moved != 2 {
					t.Fatalf("moving the repeats to the bridge's queue: %d moved, %v", moved, err)
				}
				r.create(ctx, t, r.definition(env, tc.bridgeDuplicateDetection))
				s := r.waitDrained(ctx, t, 4)
				got := countIDs(receiveMessages(ctx, t, adminConnection(ctx, t, env, "target"), r.targetFQQN()))
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("target received %v, want %v (bridge state %+v)", got, tc.want, s)
				}
			})
		})
	}
}

// differences lists the keys whose values differ between two listed messages, but those in skip.
func differences(a, b map[string]any, skip ...string) []string {
	var out []string
	for k, v := range a {
		if slices.Contains(skip, k) {
			continue
		}
		if w, ok := b[k]; !ok || fmt.Sprint(v) != fmt.Sprint(w) {
			out = append(out, fmt.Sprintf("%s: %v -> %v", k, v, b[k]))
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok && !slices.Contains(skip, k) {
			out = append(out, fmt.Sprintf("%s: (none) -> %v", k, w))
		}
	}
	slices.Sort(out)
	return out
}

// A Core bridge forwards a message as it is stored (an AMQP message inside a Core envelope,
// unpacked by the target), so the target's listing shows the source's properties and body, its
// duplicate id among them, and neither the bridge's own duplicate id, which the target takes
// off, nor anything else of the bridge's.
func TestBridge_KeepsEveryPropertyAndTheBodyOfCoreAndAMQPMessages(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"source", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, host string) {
		r := newBridgeRoute(ctx, t, env, host, "ANYCAST")
		sendMessages(ctx, t, adminConnection(ctx, t, env, host), r.sourceQueue, 1, func(id int) *amqp.Message {
			return dupMessage(id, "studio:run1:amqp")
		})
		// A Core message, from Artemis's own Core client.
		env.Produce(t, host, r.sourceQueue, 1, "--properties",
			`[{"type":"string","key":"_AMQ_DUPL_ID","value":"studio:run1:core"},{"type":"long","key":"weight","value":"7"}]`)
		before, err := r.host.ListMessages(ctx, r.sourceQueue, "")
		if err != nil || len(before) != 2 {
			t.Fatalf("source listing: %d messages (%v), want 2", len(before), err)
		}
		sent := browseAll(ctx, t, adminConnection(ctx, t, env, host), r.sourceQueue)
		r.create(ctx, t, r.definition(env, true))
		r.waitDrained(ctx, t, 2)
		after, err := r.target.ListMessages(ctx, r.targetQueue, "")
		if err != nil || len(after) != 2 {
			t.Fatalf("target listing: %d messages (%v), want 2", len(after), err)
		}
		// What the brokers give each copy of its own: its id, and the address it was routed by.
		skip := []string{"messageID", "address", "_AMQ_AD"}
		for i := range before {
			if d := differences(before[i], after[i], skip...); len(d) > 0 {
				t.Errorf("message %d changed on its way: %v\nsource: %v\ntarget: %v", i, d, before[i], after[i])
			}
			if _, ok := after[i]["_AMQ_BDUP"]; ok {
				t.Errorf("message %d kept the bridge's duplicate id: %v", i, after[i])
			}
		}
		// Bodies and AMQP sections, as an AMQP client sees them at each end.
		got := receiveMessages(ctx, t, adminConnection(ctx, t, env, "target"), r.targetFQQN())
		if len(got) != 2 {
			t.Fatalf("target received %d messages, want 2", len(got))
		}
		for i, m := range got {
			if w := sent[i]; fmt.Sprint(string(m.GetData()), m.ApplicationProperties, m.Properties.MessageID, m.Header.Durable, m.Header.Priority) !=
				fmt.Sprint(string(w.GetData()), w.ApplicationProperties, w.Properties.MessageID, w.Header.Durable, w.Header.Priority) {
				t.Errorf("message %d arrived as header %+v, properties %+v, application properties %v, body %q; the source had header %+v, properties %+v, application properties %v, body %q",
					i, m.Header, m.Properties, m.ApplicationProperties, m.GetData(), w.Header, w.Properties, w.ApplicationProperties, w.GetData())
			}
		}
	})
}

// browseAll browses what a queue holds, without taking it.
func browseAll(ctx context.Context, t *testing.T, conn *artemis.Connection, queue string) []*amqp.Message {
	t.Helper()
	b, err := conn.NewBrowser(ctx, artemis.FQQN(queue, queue), artemis.BrowserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close(ctx) }()
	var out []*amqp.Message
	for range 1000 {
		m, ok, err := b.NextWithin(ctx, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, m)
	}
	t.Fatal("browseAll: too many messages")
	return nil
}

// What each routing-type of a bridge does to a message sent to a queue's FQQN on the target,
// for messages staged in an anycast queue (as a move stages them): an AMQP message, which
// carries no routing type of its own, and a Core message, which carries ANYCAST. A message
// whose routing type the queue does not have is dropped by the target, and the bridge counts
// it acknowledged all the same; STRIP is the one that reaches the queue whatever its type.
func TestBridge_RoutingTypesToAQueuesFQQN(t *testing.T) {
	env := testenv.Require(t)
	for _, tc := range []struct {
		targetRouting, bridgeRouting string
		arrive                       string // the messages that reach the queue
	}{
		{"ANYCAST", "PASS", "amqp core"},
		{"ANYCAST", "STRIP", "amqp core"},
		{"ANYCAST", "ANYCAST", "amqp core"},
		{"ANYCAST", "MULTICAST", ""},
		{"MULTICAST", "PASS", "amqp"},
		{"MULTICAST", "STRIP", "amqp core"},
		{"MULTICAST", "ANYCAST", ""},
		{"MULTICAST", "MULTICAST", "amqp core"},
	} {
		t.Run(tc.targetRouting+" queue, "+tc.bridgeRouting, func(t *testing.T) {
			onBrokers(t, []string{"source", "legacy"}, time.Minute, func(t *testing.T, ctx context.Context, host string) {
				r := newBridgeRoute(ctx, t, env, host, tc.targetRouting)
				sendMessages(ctx, t, adminConnection(ctx, t, env, host), r.sourceQueue, 1, func(id int) *amqp.Message {
					return dupMessage(id, "studio:run1:routing")
				})
				env.Produce(t, host, r.sourceQueue, 1)
				def := r.definition(env, true)
				def.RoutingType = tc.bridgeRouting
				r.create(ctx, t, def)
				s := r.waitDrained(ctx, t, 2)
				var kinds []string
				for _, m := range receiveMessages(ctx, t, adminConnection(ctx, t, env, "target"), r.targetFQQN()) {
					if messageID(m) == "m-0" {
						kinds = append(kinds, "amqp")
					} else {
						kinds = append(kinds, "core")
					}
				}
				slices.Sort(kinds)
				if got := strings.Join(kinds, " "); got != tc.arrive {
					t.Fatalf("the target queue received %q, want %q (bridge %+v)", got, tc.arrive, s)
				}
			})
		})
	}
}

// The broker answers createBridge alike whether it deployed the bridge or not; CreateBridge
// tells the cases apart by listing the bridges.
func TestBridge_CreateRefusesATakenNameAndReportsABridgeTheBrokerDidNotDeploy(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"source", "legacy"}, time.Minute, func(t *testing.T, ctx context.Context, host string) {
		r := newBridgeRoute(ctx, t, env, host, "ANYCAST")
		r.create(ctx, t, r.definition(env, true))
		if err := r.host.CreateBridge(ctx, r.definition(env, true)); !errors.Is(err, artemis.ErrBridgeExists) {
			t.Fatalf("a second bridge of the same name: %v, want ErrBridgeExists", err)
		}
		for what, change := range map[string]func(*artemis.BridgeDefinition){
			"a missing connector": func(d *artemis.BridgeDefinition) { d.Connectors = []string{testenv.UniqueName("test.bridge.missing")} },
			"a missing queue":     func(d *artemis.BridgeDefinition) { d.Queue = testenv.UniqueName("test.bridge.missing") },
		} {
			def := r.definition(env, true)
			def.Name = testenv.UniqueName("test.bridge.refused")
			change(&def)
			err := r.host.CreateBridge(ctx, def)
			if !errors.Is(err, artemis.ErrBridgeNotDeployed) || strings.Contains(err.Error(), env.AdminPassword) {
				t.Errorf("a bridge with %s: %v, want ErrBridgeNotDeployed, without the password", what, err)
			}
		}
	})
}

// Nothing management shows of a bridge or of the broker's connectors holds the bridge's
// password, nor its user.
func TestBridge_ManagementShowsNeitherThePasswordNorTheUser(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"source", "legacy"}, time.Minute, func(t *testing.T, ctx context.Context, host string) {
		r := newBridgeRoute(ctx, t, env, host, "ANYCAST")
		def := r.definition(env, true)
		r.create(ctx, t, def)
		bridge := testenv.AdminJolokia(t, env, host, map[string]any{"type": "read",
			"mbean": testenv.BrokerObjectName(host) + ",component=bridges,name=" + fmt.Sprintf("%q", r.bridge)})
		broker := testenv.AdminJolokia(t, env, host, map[string]any{"type": "read", "mbean": testenv.BrokerObjectName(host),
			"attribute": []string{"ConnectorsAsJSON", "Connectors", "BridgeNames"}})
		for what, shown := range map[string]string{"the bridge's attributes": string(bridge), "the broker's connectors": string(broker)} {
			if strings.Contains(shown, def.Password) || strings.Contains(shown, `"`+def.User+`"`) {
				t.Errorf("%s show the password or the user: %s", what, shown)
			}
		}
	})
}

// A connector and a bridge created through management are stored by the broker and come back
// when it restarts (2.31 and 2.40), the bridge started, its counters from zero.
func TestBridge_ConnectorAndBridgeSurviveARestartOfTheirBroker(t *testing.T) {
	env := testenv.RequireOwned(t)
	onBrokers(t, []string{"source", "legacy"}, 4*time.Minute, func(t *testing.T, ctx context.Context, host string) {
		r := newBridgeRoute(ctx, t, env, host, "ANYCAST")
		r.create(ctx, t, r.definition(env, true))
		sendMessages(ctx, t, adminConnection(ctx, t, env, host), r.sourceQueue, 10, textMessage)
		r.waitDrained(ctx, t, 10)

		if err := env.StopBroker(host); err != nil {
			t.Fatal(err)
		}
		if err := env.StartBroker(host); err != nil {
			t.Fatal(err)
		}
		bridges, err := r.host.BridgeNames(ctx)
		if err != nil || !slices.Contains(bridges, r.bridge) {
			t.Fatalf("bridges after the restart: %v (%v), want %s", bridges, err, r.bridge)
		}
		connectors, err := r.host.ConnectorNames(ctx)
		if err != nil || !slices.Contains(connectors, r.connector) {
			t.Fatalf("connectors after the restart: %v (%v), want %s", connectors, err, r.connector)
		}
		s, err := r.host.Bridge(ctx, r.bridge)
		if err != nil || !s.Started || s.Forwarded != 0 || s.Acknowledged != 0 || s.ForwardingAddress != r.targetFQQN() {
			t.Fatalf("bridge after the restart: %+v (%v), want started, counting from zero, forwarding to %s", s, err, r.targetFQQN())
		}
		sendMessages(ctx, t, adminConnection(ctx, t, env, host), r.sourceQueue, 10, func(id int) *amqp.Message { return textMessage(10 + id) })
		r.waitDrained(ctx, t, 10)
		got := countIDs(receiveMessages(ctx, t, adminConnection(ctx, t, env, "target"), r.targetFQQN()))
		if len(got) != 20 {
			t.Fatalf("target received %d distinct messages of 20: %v", len(got), got)
		}
	})
}

// A target stopped while the bridge forwards: the bridge keeps reconnecting, the messages it
// sent without a confirmation stay in its queue and go again once the target is back, and the
// bridge's own duplicate ids let the target drop those it had stored already, so each message
// arrives once.
func TestBridge_ForwardsEveryMessageOnceAcrossATargetStoppedMidBridge(t *testing.T) {
	env := testenv.RequireOwned(t)
	onBrokers(t, []string{"source", "legacy"}, 4*time.Minute, func(t *testing.T, ctx context.Context, host string) {
		r := newBridgeRoute(ctx, t, env, host, "ANYCAST")
		const n = 5000
		sendAll(ctx, t, adminConnection(ctx, t, env, host), r.sourceQueue, n)
		r.create(ctx, t, r.definition(env, true))
		var s artemis.BridgeState
		for i := 0; s.Acknowledged < 200; i++ {
			var err error
			if s, err = r.host.Bridge(ctx, r.bridge); err != nil || i > 1000 {
				t.Fatalf("bridge %+v (%v) after %d reads, want 200 acknowledged", s, err, i)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := env.StopBroker("target"); err != nil {
			t.Fatal(err)
		}
		down, err := r.host.Bridge(ctx, r.bridge)
		if err != nil {
			t.Fatal(err)
		}
		depth, err := r.host.QueueDepth(ctx, r.sourceQueue)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("at the stop: %+v; with the target stopped: %+v, %d messages in the bridge's queue", s, down, depth)
		if depth+down.Acknowledged != n {
			t.Errorf("with the target stopped the queue holds %d and the bridge counts %d acknowledged, want %d in all", depth, down.Acknowledged, n)
		}
		time.Sleep(2 * time.Second) // some attempts to reconnect
		if err := env.StartBroker("target"); err != nil {
			t.Fatal(err)
		}
		after := r.waitDrained(ctx, t, n)
		t.Logf("drained after the target's return: %+v", after)
		got := countIDs(receiveMessages(ctx, t, adminConnection(ctx, t, env, "target"), r.targetFQQN()))
		doubled := 0
		for _, k := range got {
			if k > 1 {
				doubled++
			}
		}
		if len(got) != n || doubled > 0 {
			t.Fatalf("target received %d distinct messages of %d, %d of them more than once", len(got), n, doubled)
		}
	})
}

// Before 2.25.0 a broker has no addConnector or removeConnector; the client says so before it
// calls them, and every version lists its connectors and bridges.
func TestBridge_ConnectorsThroughManagementNeedArtemis225(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"source", "legacy"}, time.Minute, func(t *testing.T, ctx context.Context, host string) {
		c := testenv.Client(t, env, host, true)
		name := testenv.UniqueName("test.bridge.connector")
		err := c.AddConnector(ctx, name, env.Broker(t, "target").CoreURL)
		t.Cleanup(func() { _ = c.RemoveConnector(context.Background(), name) })
		if supported := artemis.ManagedConnectors(env.Broker(t, host).Version); supported != (err == nil) ||
			!supported && !errors.Is(err, artemis.ErrUnsupported) {
			t.Fatalf("AddConnector on Artemis %s: %v", env.Broker(t, host).Version, err)
		}
		if _, err := c.ConnectorNames(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.BridgeNames(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBridge_VersionFacts(t *testing.T) {
	for _, tc := range []struct {
		version              string
		connectors, persists bool
	}{
		{"2.18.0", false, false},
		{"2.24.0", false, false},
		{"2.25.0", true, false},
		{"2.28.0", true, true},
		{"2.31.2", true, true},
		{"2.40.0", true, true},
	} {
		if got := artemis.ManagedConnectors(tc.version); got != tc.connectors {
			t.Errorf("ManagedConnectors(%s) = %t, want %t", tc.version, got, tc.connectors)
		}
		if got := artemis.PersistsManagedBridges(tc.version); got != tc.persists {
			t.Errorf("PersistsManagedBridges(%s) = %t, want %t", tc.version, got, tc.persists)
		}
	}
}
