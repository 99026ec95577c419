package move

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// These tests give a real target queue a shape that drops or replaces messages the broker has
// already accepted. Each first shows the loss by sending to such a queue, then shows that the
// plan refuses the shape on the right attribute and that Move refuses it with nothing moved.

// sourceMessages is what each case's source queue holds: Move must leave all of them there.
const sourceMessages = 5

// dropFixture is a move fixture whose source holds sourceMessages messages.
func dropFixture(t *testing.T, ctx context.Context) *moveFixture {
	t.Helper()
	f := newMoveFixture(t, ctx, "source", "target", 0)
	f.env.Produce(t, "source", "queue://"+f.src, sourceMessages)
	return f
}

// replaceTarget destroys the fixture's plain target queue, so a case can create its own shape.
func (f *moveFixture) replaceTarget(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := f.tgtAdmin.DestroyQueue(ctx, f.tgt); err != nil {
		t.Fatal(err)
	}
}

// targetSettings sets address settings for the target queue's address for one test.
func (f *moveFixture) targetSettings(t *testing.T, ctx context.Context, settings map[string]any) {
	t.Helper()
	if err := f.tgtAdmin.AddAddressSettings(ctx, f.tgt, settings); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = f.tgtAdmin.RemoveAddressSettings(ctx, f.tgt)
	})
}

// sendTo sends msgs to fqqn as the admin user and waits for each to be accepted.
func sendTo(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string, msgs ...*amqp.Message) {
	t.Helper()
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := conn.NewSender(ctx, fqqn, artemis.SenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	for i, m := range msgs {
		p, err := s.Send(ctx, m)
		if err == nil {
			err = p.Wait(ctx)
		}
		if err != nil {
			t.Fatalf("sending message %d of %d to %s: %v", i+1, len(msgs), fqqn, err)
		}
	}
}

// plainMessages are n messages without an expiry, each with application properties props.
func plainMessages(n int, props map[string]any) []*amqp.Message {
	out := make([]*amqp.Message, n)
	for i := range out {
		p := map[string]any{}
		for k, v := range props {
			p[k] = v
		}
		out[i] = &amqp.Message{Properties: &amqp.MessageProperties{MessageID: fmt.Sprintf("drop-%d", i)},
			ApplicationProperties: p, Value: fmt.Sprintf("message %d", i)}
	}
	return out
}

// createQueueJSON creates a queue from the broker's own queue configuration JSON.
func createQueueJSON(t *testing.T, env *testenv.Env, broker string, conf map[string]any) {
	t.Helper()
	raw, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	testenv.AdminExec(t, env, broker, "createQueue(java.lang.String,boolean)", string(raw), false)
}

// messagesExpired reads how many messages the broker expired from a queue.
func messagesExpired(t *testing.T, env *testenv.Env, broker string, q artemis.QueueInfo) int64 {
	t.Helper()
	mbean := fmt.Sprintf("%s,component=addresses,address=%q,subcomponent=queues,routing-type=%q,queue=%q",
		testenv.BrokerObjectName(broker), q.Address, strings.ToLower(q.RoutingType), q.Name)
	raw := testenv.AdminJolokia(t, env, broker, map[string]any{"type": "read", "mbean": mbean, "attribute": "MessagesExpired"})
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// refusesWithNothingMoved checks that the plan refuses f's transfer on attribute with a
// finding whose summary or detail holds each of about (case-insensitive), and that Move
// refuses it too, leaving every source message in place and no run behind.
//
//nolint:unparam // the attribute is named at each call, so each test states where it expects the refusal
func refusesWithNothingMoved(t *testing.T, ctx context.Context, f *moveFixture, attribute string, about ...string) {
	t.Helper()
	e := f.engine(t, core.Options{})
	findings, err := e.Preflight(ctx, f.spec, true)
	if err != nil {
		t.Fatal(err)
	}
	matches := func(fd preflight.Finding) bool {
		text := strings.ToLower(fd.Summary + " " + fd.Detail)
		for _, a := range about {
			if !strings.Contains(text, strings.ToLower(a)) {
				return false
			}
		}
		return fd.Severity == preflight.Error && fd.Attribute == attribute
	}
	found := false
	for _, fd := range findings {
		found = found || matches(fd)
	}
	if !found {
		t.Fatalf("the plan does not refuse on %s about %q; findings: %+v", attribute, about, findings)
	}
	_, err = e.Move(ctx, f.spec)
	var refused *core.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Move did not refuse: %v", err)
	}
	found = false
	for _, fd := range refused.Findings {
		found = found || matches(fd)
	}
	if !found {
		t.Errorf("Move refused, but not on %s about %q: %v", attribute, about, err)
	}
	if d := transfertest.QueueDepth(t, ctx, f.srcAdmin, f.src); d != sourceMessages {
		t.Errorf("the source holds %d of %d messages after the refusal", d, sourceMessages)
	}
	if runs, err := e.unfinishedRuns(ctx, &f.spec); err != nil || len(runs) != 0 {
		t.Errorf("the refusal left runs behind: %+v %v", runs, err)
	}
}

// A queue created with only a last-value key is a last-value queue: 2.40 reports its
// last-value flag false and still keeps one message per key.
func TestTargetDrops_LastValueKeyAloneReplacesMessagesAndIsRefused(t *testing.T) {
	ctx := transfertest.Ctx(t, 3*time.Minute)
	f := dropFixture(t, ctx)
	f.replaceTarget(t, ctx)
	fixtureQueueSpec(t, ctx, f.tgtAdmin, artemis.QueueSpec{Name: f.tgt, Durable: true, RingSize: -1, MaxConsumers: -1,
		LastValueKey: "k"})
	q, err := f.tgtAdmin.Queue(ctx, f.tgt)
	if err != nil {
		t.Fatal(err)
	}
	if q.LastValueKey != "k" || !q.IsLastValue() {
		t.Fatalf("the queue reads last-value %v, last-value-key %q", q.LastValue, q.LastValueKey)
	}
	t.Logf("the broker reports last-value=%v for a queue with only last-value-key %q", q.LastValue, q.LastValueKey)

	sendTo(t, ctx, f.tgtAdmin, q.FQQN(), plainMessages(3, map[string]any{"k": "same"})...)
	if d := transfertest.QueueDepth(t, ctx, f.tgtAdmin, f.tgt); d != 1 {
		t.Fatalf("3 accepted messages sharing a key left %d on the queue; want 1 (the loss this rule prevents)", d)
	}
	refusesWithNothingMoved(t, ctx, f, "target.queue", "last-value", `last-value-key "k"`)
}

// The legacy broker (2.31) reports the last-value flag with the key; the reads of the key and
// of diverts work there too.
func TestTargetDrops_LegacyBrokerReportsLastValueKeyAndDiverts(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, time.Minute)
	c := testenv.Client(t, env, "legacy", true)
	name := testenv.UniqueName("drops.lvq")
	fixtureQueueSpec(t, ctx, c, artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: -1, LastValueKey: "k"})
	q, err := c.Queue(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if q.LastValueKey != "k" || !q.IsLastValue() {
		t.Errorf("legacy broker: last-value %v, last-value-key %q", q.LastValue, q.LastValueKey)
	}
	divert := name + ".divert"
	createDivert(t, env, "legacy", divert, name, name+".elsewhere", true, "x = 1")
	diverts, err := testenv.Client(t, env, "legacy", false).Diverts(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	want := []artemis.Divert{{Name: divert, Address: name, ForwardingAddress: name + ".elsewhere", Exclusive: true, Filter: "x = 1"}}
	if !reflect.DeepEqual(diverts, want) {
		t.Errorf("legacy broker diverts of %s:\n got %+v\nwant %+v", name, diverts, want)
	}
}

// An address that gives messages an expiry, with no expiry address, deletes each moved message
// that is not consumed in time. Each setting alone does it.
func TestTargetDrops_ExpiryDelayWithoutExpiryAddressDeletesMessagesAndIsRefused(t *testing.T) {
	cases := []struct{ setting, key string }{
		{"expiry-delay", "expiryDelay"},
		{"min-expiry-delay", "minExpiryDelay"},
		{"max-expiry-delay", "maxExpiryDelay"},
	}
	for _, tc := range cases {
		t.Run(tc.setting, func(t *testing.T) {
			ctx := transfertest.Ctx(t, 3*time.Minute)
			f := dropFixture(t, ctx)
			const delay = 300 * time.Millisecond
			f.targetSettings(t, ctx, map[string]any{tc.key: delay.Milliseconds(), "expiryAddress": ""})

			sent := time.Now()
			sendTo(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt), plainMessages(1, nil)...)
			// The broker stamped the expiry at arrival, after sent: once delay has passed since
			// then, the message has expired.
			time.Sleep(time.Until(sent.Add(delay + 200*time.Millisecond)))
			// The queue still counts the expired message until a delivery is tried: the
			// consumer does not wait for that count.
			if got := transfertest.ConsumeArriving(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt), 3*time.Second); len(got) != 0 {
				t.Fatalf("a consumer received %d message(s); the expired one should be gone", len(got))
			}
			q, err := f.tgtAdmin.Queue(ctx, f.tgt)
			if err != nil {
				t.Fatal(err)
			}
			if q.MessageCount != 0 || messagesExpired(t, f.env, "target", q) != 1 {
				t.Fatalf("after the expiry the queue holds %d message(s) and expired %d; want 0 and 1 (the loss this rule prevents)",
					q.MessageCount, messagesExpired(t, f.env, "target", q))
			}
			refusesWithNothingMoved(t, ctx, f, "target.queue", "expiry", tc.setting+" 300 ms", "no expiry-address")
		})
	}
}

// With an expiry address the expired message is kept there: the plan only warns.
func TestTargetDrops_ExpiryDelayWithAnExpiryAddressOnlyWarns(t *testing.T) {
	ctx := transfertest.Ctx(t, 2*time.Minute)
	f := dropFixture(t, ctx)
	f.targetSettings(t, ctx, map[string]any{"expiryDelay": 60_000}) // expiry address ExpiryQueue, from "#"
	findings, err := f.engine(t, core.Options{}).Preflight(ctx, f.spec, true)
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, fd := range findings {
		if fd.Severity == preflight.Error {
			t.Errorf("unexpected refusal: %+v", fd)
		}
		if fd.Severity == preflight.Warning && fd.Attribute == "target.queue" && strings.Contains(fd.Detail, "expiry-delay 60000 ms") &&
			strings.Contains(fd.Detail, `"ExpiryQueue"`) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning that the target gives messages an expiry: %+v", findings)
	}
}

// An exclusive divert takes every message off the address, also one sent to the queue's fully
// qualified name.
func TestTargetDrops_ExclusiveDivertTakesMessagesSentToTheQueueAndIsRefused(t *testing.T) {
	ctx := transfertest.Ctx(t, 3*time.Minute)
	f := dropFixture(t, ctx)
	elsewhere := f.tgt + ".elsewhere"
	testenv.FixtureQueue(t, ctx, f.tgtAdmin, elsewhere)
	divert := f.tgt + ".divert"
	createDivert(t, f.env, "target", divert, f.tgt, elsewhere, true, nil)

	sendTo(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt), plainMessages(3, nil)...)
	if d, o := transfertest.QueueDepth(t, ctx, f.tgtAdmin, f.tgt), transfertest.QueueDepth(t, ctx, f.tgtAdmin, elsewhere); d != 0 || o != 3 {
		t.Fatalf("3 messages sent to %s::%s: %d on the queue, %d diverted; want 0 and 3 (the loss this rule prevents)", f.tgt, f.tgt, d, o)
	}
	refusesWithNothingMoved(t, ctx, f, "target.queue", "divert", divert, elsewhere)
}

// An auto-created queue whose address deletes auto-delete queues whatever they hold is deleted
// with its messages once its last consumer has gone.
func TestTargetDrops_AutoDeleteQueueIsDeletedWithItsMessagesAndIsRefused(t *testing.T) {
	ctx := transfertest.Ctx(t, 4*time.Minute)
	f := dropFixture(t, ctx)
	f.replaceTarget(t, ctx)
	f.targetSettings(t, ctx, map[string]any{"autoCreateQueues": true, "autoDeleteQueues": true,
		"autoDeleteQueuesMessageCount": -1, "autoDeleteQueuesDelay": 0})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = f.tgtAdmin.DestroyQueue(ctx, f.tgt)
	})
	fqqn := artemis.FQQN(f.tgt, f.tgt)

	// The first send auto-creates the queue; a consumer comes and goes, as one does on a target.
	sendTo(t, ctx, f.tgtAdmin, fqqn, plainMessages(3, nil)...)
	q, err := f.tgtAdmin.Queue(ctx, f.tgt)
	if err != nil || !q.AutoDelete || q.MessageCount != 3 {
		t.Fatalf("auto-created queue: %+v %v", q, err)
	}
	attachAndLeave(t, ctx, f.tgtAdmin, fqqn)
	// The broker's reaper runs every address-queue-scan-period: 30 s by default, a second on the
	// test environment's brokers.
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, err := f.tgtAdmin.Queue(ctx, f.tgt)
		if errors.Is(err, artemis.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the auto-delete queue still exists 90 s after its consumer left")
		}
		time.Sleep(time.Second)
	}
	t.Log("the broker deleted the queue with its 3 messages once its consumer had left")

	// Auto-created again, as a producer would; the plan and Move must refuse it.
	sendTo(t, ctx, f.tgtAdmin, fqqn, plainMessages(1, nil)...)
	refusesWithNothingMoved(t, ctx, f, "target.queue", "deleted", "auto-delete-queues-message-count -1")
}

// attachAndLeave attaches a consumer that takes nothing and closes it.
func attachAndLeave(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string) {
	t.Helper()
	r, closeConsumer := transfertest.Consumer(t, ctx, c, fqqn, 1)
	defer closeConsumer()
	msg, err := r.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// A non-destructive queue and a non-exclusive divert keep every message sent to the queue:
// the plan accepts them.
func TestTargetDrops_NonDestructiveQueueAndNonExclusiveDivertKeepEveryMessage(t *testing.T) {
	ctx := transfertest.Ctx(t, 3*time.Minute)
	f := dropFixture(t, ctx)
	f.replaceTarget(t, ctx)
	createQueueJSON(t, f.env, "target", map[string]any{"name": f.tgt, "address": f.tgt, "routing-type": "ANYCAST",
		"durable": true, "non-destructive": true})
	t.Cleanup(func() { _ = f.tgtAdmin.DestroyQueue(context.Background(), f.tgt) })
	copies := f.tgt + ".copies"
	testenv.FixtureQueue(t, ctx, f.tgtAdmin, copies)
	divert := f.tgt + ".divert"
	createDivert(t, f.env, "target", divert, f.tgt, copies, false, nil)

	sendTo(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt), plainMessages(3, map[string]any{"_AMQ_LVQ_NAME": "same"})...)
	if d := transfertest.QueueDepth(t, ctx, f.tgtAdmin, f.tgt); d != 3 {
		t.Fatalf("the queue holds %d of 3 sent messages", d)
	}
	// 2.40 applies a non-exclusive divert to sends to the address only, not to the queue's
	// fully qualified name (0 copies); either way the queue keeps its own.
	t.Logf("the non-exclusive divert copied %d of 3 messages sent to the fully qualified name",
		transfertest.QueueDepth(t, ctx, f.tgtAdmin, copies))
	findings, err := f.engine(t, core.Options{}).Preflight(ctx, f.spec, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range findings {
		if fd.Severity == preflight.Error {
			t.Errorf("refused a target that keeps every message: %+v", fd)
		}
	}
}

// The facts behind the broker-wide rules read as the brokers run them (the defaults), on both
// versions; the refusal of persist-id-cache=false is table-tested in internal/preflight, since
// a test may not restart a broker. A non-durable target queue is refused on target.queue.
func TestPreflight_ReadsPersistenceOfTheRealTargetBrokers(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 2*time.Minute)
	for _, broker := range []string{"target", "legacy"} {
		info, err := testenv.Client(t, env, broker, false).BrokerInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !info.PersistIDCache || !info.PersistenceEnabled {
			t.Errorf("broker %s (%s): persist-id-cache %v, persistence-enabled %v; the test brokers run the defaults (true)",
				broker, info.Version, info.PersistIDCache, info.PersistenceEnabled)
		}
	}

	f := dropFixture(t, ctx)
	f.replaceTarget(t, ctx)
	fixtureQueueSpec(t, ctx, f.tgtAdmin, artemis.QueueSpec{Name: f.tgt, Durable: false, RingSize: -1, MaxConsumers: -1})
	refusesWithNothingMoved(t, ctx, f, "target.queue", "not durable")
}

// createDivert creates divert on broker, from address to forwardTo (exclusive or not, with
// filter unless it is nil), and destroys it when the test ends.
func createDivert(t *testing.T, env *testenv.Env, broker, divert, address, forwardTo string, exclusive bool, filter any) {
	t.Helper()
	testenv.AdminExec(t, env, broker,
		"createDivert(java.lang.String,java.lang.String,java.lang.String,java.lang.String,boolean,java.lang.String,java.lang.String)",
		divert, divert, address, forwardTo, exclusive, filter, nil)
	t.Cleanup(func() {
		testenv.AdminExec(t, env, broker, "destroyDivert(java.lang.String)", divert)
	})
}
