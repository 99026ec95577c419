package transfer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// A target queue's routing type decides whether the broker delivers what the relay sends to
// its fully qualified name: Artemis routes a message by its own routing type (the annotation
// x-opt-routing-type, else the JMS destination kind x-opt-jms-dest), and a queue of the other
// type does not take it, with no error to the sender. These tests send every kind of message
// a source holds into every kind of target queue, moved and copied, and count each message on
// the target queue itself, not the sender's acceptance.

// routedQueue is one side of a routing case: a queue, its address and its routing type.
type routedQueue struct {
	broker, address, queue, routing string
}

func (q routedQueue) fqqn() string { return artemis.FQQN(q.address, q.queue) }

// newRoutedQueue creates a queue of the given routing type for one test. A multicast queue is a
// subscription on an address of its own beside a second subscription, sibling, which a
// transfer into the first must leave empty.
func newRoutedQueue(t *testing.T, ctx context.Context, env *testenv.Env, broker, name, routing string) (q routedQueue, sibling *routedQueue) {
	t.Helper()
	admin := testenv.Client(t, env, broker, true)
	q = routedQueue{broker: broker, queue: testenv.UniqueName(name), routing: routing}
	q.address = q.queue
	if routing == "MULTICAST" {
		q.address = testenv.UniqueName(name + ".topic")
		sibling = &routedQueue{broker: broker, address: q.address, queue: q.queue + ".sibling", routing: routing}
		testenv.CreateQueue(t, ctx, admin, artemis.QueueSpec{Name: sibling.queue, Address: q.address, RoutingType: routing, Durable: true, RingSize: -1, MaxConsumers: -1})
	}
	testenv.CreateQueue(t, ctx, admin, artemis.QueueSpec{Name: q.queue, Address: q.address, RoutingType: routing, Durable: true, RingSize: -1, MaxConsumers: -1})
	if q.address != q.queue {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = admin.DeleteAddress(ctx, q.address, true)
		})
	}
	return q, sibling
}

// sourceKind is how a case's source messages are produced, each with an int property count
// from 0 to n-1.
type sourceKind struct {
	name    string
	produce func(t *testing.T, ctx context.Context, env *testenv.Env, q routedQueue, n int)
}

// Core: Artemis's own CLI producer, to a JMS queue or topic as the source queue's routing type
// says (the CLI's queue destination is anycast: sent to a multicast queue's fully qualified
// name, it would be dropped). The source broker's conversion of such a message for the relay
// marks it x-opt-jms-dest = queue, whatever it was sent to.
var coreProduced = sourceKind{"core", func(t *testing.T, ctx context.Context, env *testenv.Env, q routedQueue, n int) {
	destination := "queue://" + q.queue
	if q.routing == "MULTICAST" {
		destination = "topic://" + q.address
	}
	env.Produce(t, q.broker, destination, n)
}}

// AMQP messages that name the JMS kind of their destination, as a JMS client over AMQP (Qpid
// JMS) writes it: 0 a queue, 1 a topic. Each also names the source queue's routing type
// (x-opt-routing-type, which takes precedence over the kind), so that the source stores it
// whatever its kind.
func amqpProducedAs(kind string, jmsDest int8) sourceKind {
	return sourceKind{"amqp-" + kind, func(t *testing.T, ctx context.Context, env *testenv.Env, q routedQueue, n int) {
		routing := int8(1) // ANYCAST
		if q.routing == "MULTICAST" {
			routing = 0
		}
		transfertest.ProduceTo(t, ctx, testenv.Client(t, env, q.broker, true), q.fqqn(), n, func(i int) *amqp.Message {
			return &amqp.Message{Header: &amqp.MessageHeader{Durable: true},
				Properties: &amqp.MessageProperties{MessageID: fmt.Sprintf("routing-%d", i)},
				Annotations: amqp.Annotations{"x-opt-jms-dest": jmsDest, "x-opt-jms-msg-type": int8(5),
					"x-opt-routing-type": routing},
				ApplicationProperties: map[string]any{"count": int32(i)}, Value: fmt.Sprintf("message %d", i)}
		})
	}}
}

// countsOn consumes a queue and returns the sorted count properties of its messages.
func countsOn(t *testing.T, ctx context.Context, env *testenv.Env, q routedQueue) []int {
	t.Helper()
	return countsOf(t, q, transfertest.ConsumeAll(t, ctx, testenv.Client(t, env, q.broker, true), q.fqqn()))
}

// countsOf returns the sorted count properties of a queue's messages.
func countsOf(t *testing.T, q routedQueue, msgs []*amqp.Message) []int {
	t.Helper()
	var counts []int
	for _, msg := range msgs {
		n, err := strconv.Atoi(fmt.Sprint(msg.ApplicationProperties["count"]))
		if err != nil {
			t.Fatalf("a message on %s without a count: %v", q.queue, msg.ApplicationProperties)
		}
		counts = append(counts, n)
	}
	sort.Ints(counts)
	return counts
}

// checkCounts fails unless counts holds 0..n-1, each once.
func checkCounts(t *testing.T, what string, counts []int, n int) {
	t.Helper()
	ok := len(counts) == n
	for i := 0; ok && i < n; i++ {
		ok = counts[i] == i
	}
	if !ok {
		t.Errorf("%s holds %d messages, want each of the %d once (counts %v)", what, len(counts), n, shortInts(counts))
	}
}

func shortInts(v []int) string {
	if len(v) > 20 {
		return fmt.Sprint(v[:20]) + "…"
	}
	return fmt.Sprint(v)
}

// checkRoutingAnnotation asserts the resource page's fidelity row: a message whose JMS kind of
// destination (x-opt-jms-dest: 0 a queue, 1 a topic) names the other routing type than the
// target queue's arrives with x-opt-routing-type naming the queue's (0 MULTICAST, 1 ANYCAST),
// its JMS kind kept; any other arrives without it.
func checkRoutingAnnotation(t *testing.T, tgt routedQueue, msgs []*amqp.Message) {
	t.Helper()
	want := int64(1)
	if tgt.routing == "MULTICAST" {
		want = 0
	}
	for _, msg := range msgs {
		kind, hasKind := msg.Annotations["x-opt-jms-dest"]
		contrary := hasKind && fmt.Sprint(kind) != fmt.Sprint(1-want)
		got, named := msg.Annotations["x-opt-routing-type"]
		switch {
		case contrary && (!named || fmt.Sprint(got) != fmt.Sprint(want)):
			t.Errorf("a message of JMS kind %v arrived in a %s queue with x-opt-routing-type %v, want %d", kind, tgt.routing, got, want)
			return
		case !contrary && named:
			t.Errorf("a message of JMS kind %v (present %v) arrived in a %s queue with x-opt-routing-type %v, want none", kind, hasKind, tgt.routing, got)
			return
		}
	}
}

// routingCase is one transfer of one kind of message between queues of the given routing types.
type routingCase struct {
	source              sourceKind
	sourceRouting       string
	targetRouting       string
	sourceBroker, tgtBr string
}

func (c routingCase) String() string {
	return fmt.Sprintf("%s_%s-%s_to_%s-%s", c.source.name, c.sourceBroker, strings.ToLower(c.sourceRouting), c.tgtBr, strings.ToLower(c.targetRouting))
}

// routingCases are every source message kind into both routing types, between the 2.40 brokers,
// and the Core-produced ones into and out of the legacy broker (2.31 in make test, 2.18 with
// make test-versions).
func routingCases() []routingCase {
	var out []routingCase
	for _, src := range []sourceKind{coreProduced, amqpProducedAs("queue", 0), amqpProducedAs("topic", 1)} {
		for _, srcRouting := range []string{"ANYCAST", "MULTICAST"} {
			for _, tgtRouting := range []string{"ANYCAST", "MULTICAST"} {
				out = append(out, routingCase{src, srcRouting, tgtRouting, "source", "target"})
			}
		}
	}
	for _, tgtRouting := range []string{"ANYCAST", "MULTICAST"} {
		out = append(out, routingCase{coreProduced, "ANYCAST", tgtRouting, "source", "legacy"},
			routingCase{amqpProducedAs("topic", 1), "MULTICAST", tgtRouting, "source", "legacy"},
			routingCase{coreProduced, "MULTICAST", tgtRouting, "legacy", "target"})
	}
	return out
}

const routingMessages = 7

// TestMove_DeliversIntoQueuesOfEitherRoutingType moves each kind of message between queues of
// each routing type: the target queue receives every message once (counted by consuming it),
// its sibling subscription none, and the source keeps none.
func TestMove_DeliversIntoQueuesOfEitherRoutingType(t *testing.T) {
	runRoutingCases(t, ModeMove)
}

// TestCopy_DeliversIntoQueuesOfEitherRoutingType is the same for copies: the source keeps
// every message, and the target queue receives each once.
func TestCopy_DeliversIntoQueuesOfEitherRoutingType(t *testing.T) {
	runRoutingCases(t, ModeCopy)
}

func runRoutingCases(t *testing.T, mode Mode) {
	env := testenv.Require(t)
	var l *ledger.Ledger
	if mode == ModeCopy {
		l = testenv.OpenLedger(t, transfertest.LedgerDSN(t, env))
	}
	for _, c := range routingCases() {
		t.Run(c.String(), func(t *testing.T) {
			// The cases use queues of their own, and most of each is waiting for a broker.
			t.Parallel()
			ctx := transfertest.Ctx(t, 3*time.Minute)
			src, _ := newRoutedQueue(t, ctx, env, c.sourceBroker, "routing.src", c.sourceRouting)
			tgt, sibling := newRoutedQueue(t, ctx, env, c.tgtBr, "routing.tgt", c.targetRouting)
			c.source.produce(t, ctx, env, src, routingMessages)
			if d := transfertest.QueueDepth(t, ctx, testenv.Client(t, env, c.sourceBroker, true), src.queue); d != routingMessages {
				t.Fatalf("fixture: the source queue holds %d messages, want %d", d, routingMessages)
			}
			spec := Spec{Mode: mode, Source: Endpoint{Broker: c.sourceBroker, Queue: src.queue}, Target: Endpoint{Broker: c.tgtBr, Queue: tgt.queue}}
			srcAdmin := testenv.Client(t, env, c.sourceBroker, true)
			t.Cleanup(func() { transfertest.RemoveRunsOf(t, srcAdmin, spec) })
			e := &Engine{Source: testenv.Client(t, env, c.sourceBroker, false), Target: testenv.Client(t, env, c.tgtBr, false)}
			if mode == ModeCopy {
				e.Bookkeeper = NewLedgerBook(l, ledger.Creator{User: "test", Host: "test", Workspace: "default"})
				e.Options.CopyIdleTimeout = 2 * time.Second
			}
			res, err := e.Run(ctx, spec)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			if res.Relayed != routingMessages {
				t.Errorf("the run says it relayed %d messages, want %d", res.Relayed, routingMessages)
			}
			arrived := transfertest.ConsumeAll(t, ctx, testenv.Client(t, env, tgt.broker, true), tgt.fqqn())
			checkCounts(t, "the target queue "+tgt.queue, countsOf(t, tgt, arrived), routingMessages)
			checkRoutingAnnotation(t, tgt, arrived)
			if sibling != nil {
				checkCounts(t, "the target's other subscription "+sibling.queue, countsOn(t, ctx, env, *sibling), 0)
			}
			want := 0
			if mode == ModeCopy {
				want = routingMessages
			}
			checkCounts(t, "the source queue "+src.queue, countsOn(t, ctx, env, src), want)
		})
	}
}

// newDiscardingTarget creates an anycast target queue on an address of both routing types, and
// returns it with a Hooks.BeforeSend that, before the run's first send (after the run read the
// queue's routing type), replaces it by a multicast queue of the same name on that address:
// the first message then names a routing type the queue does not take, and the broker confirms
// it while storing nothing, as a target that drops messages does. (The address keeps both
// types, as the broker checks the sender's routing type against the address's.)
func newDiscardingTarget(t *testing.T, ctx context.Context, env *testenv.Env, name string) (routedQueue, func()) {
	t.Helper()
	admin := testenv.Client(t, env, "target", true)
	tgt := routedQueue{broker: "target", queue: testenv.UniqueName(name), routing: "ANYCAST"}
	tgt.address = tgt.queue + ".both"
	if err := admin.CreateAddress(ctx, tgt.address, []string{"ANYCAST", "MULTICAST"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = admin.DeleteAddress(ctx, tgt.address, true)
	})
	queue := artemis.QueueSpec{Name: tgt.queue, Address: tgt.address, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: -1}
	if err := admin.CreateQueue(ctx, queue, false); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	return tgt, func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := admin.DestroyQueue(ctx, tgt.queue); err != nil {
				t.Errorf("sabotage: destroying the target queue: %v", err)
			}
			queue.RoutingType = "MULTICAST"
			if err := admin.CreateQueue(ctx, queue, false); err != nil {
				t.Errorf("sabotage: creating the multicast queue: %v", err)
			}
		})
	}
}

// TestMove_StopsWhenTheTargetQueueDropsTheFirstMessage: a target queue that the broker stops
// routing to after the run's checks (replaced by a queue of the other routing type) confirms
// the run's first message and stores nothing. The move proves the first message's arrival on
// the target queue before it accepts its staged copy: it stops with ErrTargetDiscards, the
// message still staged; the next apply refuses to resume the run (the target spent the
// message's duplicate id); a return puts every message back on the source; and a new move, now
// routed as the new queue's type, delivers each once.
func TestMove_StopsWhenTheTargetQueueDropsTheFirstMessage(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, _ := newRoutedQueue(t, ctx, env, "source", "discard.src", "ANYCAST")
	tgt, sabotage := newDiscardingTarget(t, ctx, env, "discard.tgt")
	coreProduced.produce(t, ctx, env, src, routingMessages)
	spec := Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src.queue}, Target: Endpoint{Broker: "target", Queue: tgt.queue}}
	srcAdmin := testenv.Client(t, env, "source", true)
	t.Cleanup(func() { transfertest.RemoveRunsOf(t, srcAdmin, spec) })
	e := &Engine{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Hooks: Hooks{BeforeSend: sabotage}}
	res, err := e.Run(ctx, spec)
	if !errors.Is(err, ErrTargetDiscards) {
		t.Fatalf("the move with a discarding target: %v; want ErrTargetDiscards", err)
	}
	if errors.Is(err, ErrInterrupted) {
		t.Errorf("the error says the run resumes: %v", err)
	}
	if res.Relayed != 0 {
		t.Errorf("the stopped run counts %d messages relayed, want 0", res.Relayed)
	}
	staged := transfertest.QueueDepth(t, ctx, srcAdmin, StagingQueue(res.RunID)) + transfertest.QueueDepth(t, ctx, srcAdmin, src.queue)
	if staged != routingMessages {
		t.Fatalf("source and staging hold %d messages, want all %d", staged, routingMessages)
	}
	e.Hooks = Hooks{}
	if _, err := e.Run(ctx, spec); !errors.Is(err, ErrTargetDiscards) {
		t.Fatalf("applying again before a return: %v; want the run refused with ErrTargetDiscards", err)
	}
	if _, err := e.Return(ctx, res.RunID); err != nil {
		t.Fatalf("returning the run: %v", err)
	}
	if d := transfertest.QueueDepth(t, ctx, srcAdmin, src.queue); d != routingMessages {
		t.Fatalf("after the return the source holds %d messages, want %d", d, routingMessages)
	}
	tgt.routing = "MULTICAST"
	if _, err := e.Run(ctx, spec); err != nil {
		t.Fatalf("the move as a new run: %v", err)
	}
	checkCounts(t, "the target queue", countsOn(t, ctx, env, tgt), routingMessages)
	checkCounts(t, "the source queue", countsOn(t, ctx, env, src), 0)
}

// TestCopy_StopsWhenTheTargetQueueDropsTheFirstMessage: the same target, for a copy. The copy
// records its first message only once it showed on the target queue: it stops with
// ErrTargetDiscards having recorded nothing, the ledger records the run abandoned, and the next
// apply copies as a new run (duplicate ids of its own), each message once.
func TestCopy_StopsWhenTheTargetQueueDropsTheFirstMessage(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	l := testenv.OpenLedger(t, transfertest.LedgerDSN(t, env))
	src, _ := newRoutedQueue(t, ctx, env, "source", "discard.copy.src", "ANYCAST")
	tgt, sabotage := newDiscardingTarget(t, ctx, env, "discard.copy.tgt")
	coreProduced.produce(t, ctx, env, src, routingMessages)
	spec := Spec{Mode: ModeCopy, Source: Endpoint{Broker: "source", Queue: src.queue}, Target: Endpoint{Broker: "target", Queue: tgt.queue}}
	e := &Engine{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Bookkeeper: NewLedgerBook(l, ledger.Creator{User: "test", Host: "test", Workspace: "default"}),
		Hooks:      Hooks{BeforeSend: sabotage}}
	e.Options.CopyIdleTimeout = 2 * time.Second
	res, err := e.Run(ctx, spec)
	if !errors.Is(err, ErrTargetDiscards) {
		t.Fatalf("the copy with a discarding target: %v; want ErrTargetDiscards", err)
	}
	run, err := l.GetRun(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != ledger.StatusAbandoned || run.Counters.Relayed != 0 {
		t.Errorf("the stopped copy is %s with %d recorded, want abandoned with none", run.Status, run.Counters.Relayed)
	}
	e.Hooks = Hooks{}
	tgt.routing = "MULTICAST"
	res2, err := e.Run(ctx, spec)
	if err != nil {
		t.Fatalf("the copy applied again: %v", err)
	}
	if res2.RunID == res.RunID || res2.Resumed {
		t.Errorf("the copy applied again ran %s (resumed %v), want a new run beside %s", res2.RunID, res2.Resumed, res.RunID)
	}
	checkCounts(t, "the target queue", countsOn(t, ctx, env, tgt), routingMessages)
	checkCounts(t, "the source queue", countsOn(t, ctx, env, src), routingMessages)
}
