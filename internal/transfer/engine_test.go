package transfer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// testClient returns a client for a broker of the environment: the transfer user for the
// engine, admin for fixtures and checks.
func testClient(t *testing.T, env *testenv.Env, broker string, admin bool) *artemis.Client {
	t.Helper()
	b := env.Broker(t, broker)
	user, pass := env.TransferUser, env.TransferPassword
	if admin {
		user, pass = env.AdminUser, env.AdminPassword
	}
	c, err := artemis.New(artemis.Config{Name: broker, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
		Username: user, Password: pass, RequestTimeout: 70 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// fixtureQueue creates an anycast queue on its own address for one test.
func fixtureQueue(t *testing.T, ctx context.Context, c *artemis.Client, name string) {
	t.Helper()
	if err := c.CreateQueue(ctx, artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.DestroyQueue(ctx, name)
	})
}

// browseIDs returns the message ids on a queue, without consuming them.
func browseIDs(t *testing.T, ctx context.Context, c *artemis.Client, queue string) []string {
	t.Helper()
	var ids []string
	for _, msg := range browseAll(t, ctx, c, queue) {
		ids = append(ids, messageIDOf(msg))
	}
	sort.Strings(ids)
	return ids
}

// browseAll returns the messages of a queue in its order, without consuming them: every
// message a browser can see (visibleCount).
func browseAll(t *testing.T, ctx context.Context, c *artemis.Client, queue string) []*amqp.Message {
	t.Helper()
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	visible := visibleCount(t, ctx, c, queue)
	b, err := conn.NewBrowser(ctx, queue+"::"+queue, artemis.BrowserOptions{Credit: 1000, IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	var out []*amqp.Message
	for i := 0; i < 2_000_000 && int64(len(out)) < visible; i++ {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		out = append(out, msg)
	}
	return out
}

// visibleCount is how many messages of a queue a browser or consumer can see now: its count
// less its scheduled and in-delivery ones. The tests' browses and consumes stop once they have
// seen that many, so that a slow broker on a busy machine is waited for instead of being taken
// for the end of the queue; their long idle timeouts only end a walk that can never see them all.
func visibleCount(t *testing.T, ctx context.Context, c *artemis.Client, queue string) int64 {
	t.Helper()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		t.Fatal(err)
	}
	return q.MessageCount - q.ScheduledCount - q.DeliveringCount
}

// consumeArriving consumes what a queue delivers until nothing arrives for quiet, without
// waiting for its visible count: for a queue whose count still includes messages the broker
// will not deliver (expired ones, which it removes only when it tries to deliver them).
func consumeArriving(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string, quiet time.Duration) []*amqp.Message {
	t.Helper()
	return consumeWhile(t, ctx, c, fqqn, func(int) time.Duration { return quiet })
}

// consumeAll consumes every message of a queue and returns them.
func consumeAll(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string) []*amqp.Message {
	t.Helper()
	queue := fqqn
	if _, q, ok := strings.Cut(fqqn, "::"); ok {
		queue = q
	}
	visible := visibleCount(t, ctx, c, queue)
	// Every visible message is waited for; after them, a short wait shows any doubles that
	// arrived late (the count read first already includes those of a finished run).
	return consumeWhile(t, ctx, c, fqqn, func(got int) time.Duration {
		if int64(got) < visible {
			return time.Minute
		}
		return time.Second
	})
}

// consumeWhile consumes and accepts a queue's messages until none arrives within wait(number
// received so far).
func consumeWhile(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string, wait func(got int) time.Duration) []*amqp.Message {
	t.Helper()
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r, err := conn.NewReceiver(ctx, fqqn, artemis.ReceiverOptions{Credit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	var out []*amqp.Message
	for i := 0; i < 2_000_000; i++ {
		waitCtx, cancel := context.WithTimeout(ctx, wait(len(out)))
		msg, err := r.Receive(waitCtx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Accept(ctx, msg); err != nil {
			t.Fatal(err)
		}
		out = append(out, msg)
	}
	return out
}

func messageIDOf(msg *amqp.Message) string {
	if msg.Properties == nil || msg.Properties.MessageID == nil {
		return ""
	}
	return fmt.Sprint(msg.Properties.MessageID)
}

// checkSameSet fails unless got holds exactly want, each once.
func checkSameSet(t *testing.T, want []string, got []*amqp.Message) {
	t.Helper()
	seen := map[string]int{}
	for _, m := range got {
		seen[messageIDOf(m)]++
	}
	lost, doubled := 0, 0
	for _, id := range want {
		switch seen[id] {
		case 0:
			lost++
		case 1:
		default:
			doubled++
		}
		delete(seen, id)
	}
	if lost > 0 || doubled > 0 || len(seen) > 0 || len(got) != len(want) {
		t.Fatalf("target holds %d messages for %d wanted: %d lost, %d doubled, %d unexpected", len(got), len(want), lost, doubled, len(seen))
	}
}

// checkNoStaging fails if any staging queue or staging settings of run id remain.
func checkNoStaging(t *testing.T, ctx context.Context, c *artemis.Client, runID string) {
	t.Helper()
	for _, q := range []string{StagingQueue(runID), ManifestQueue(runID)} {
		if _, err := c.Queue(ctx, q); !errors.Is(err, artemis.ErrNotFound) {
			t.Errorf("queue %s still exists (%v)", q, err)
		}
	}
	s, err := c.AddressSettings(ctx, StagingQueue(runID))
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxDeliveryAttempts == -1 {
		t.Errorf("staging address settings of %s remain", runID)
	}
}

func queueDepth(t *testing.T, ctx context.Context, c *artemis.Client, queue string) int64 {
	t.Helper()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		t.Fatal(err)
	}
	return q.MessageCount
}

func TestMove_WholeQueueOf10000BetweenTwoBrokers(t *testing.T) {
	env := testenv.Require(t)
	ctx := testCtx(t, 5*time.Minute)
	srcAdmin, tgtAdmin := testClient(t, env, "source", true), testClient(t, env, "target", true)
	src, tgt := testenv.UniqueName("move.whole.src"), testenv.UniqueName("move.whole.tgt")
	fixtureQueue(t, ctx, srcAdmin, src)
	fixtureQueue(t, ctx, tgtAdmin, tgt)
	env.Produce(t, "source", "queue://"+src, 10_000)
	want := browseIDs(t, ctx, srcAdmin, src)
	if len(want) != 10_000 {
		t.Fatalf("browsed %d source messages", len(want))
	}

	var last Progress
	e := &Engine{Source: testClient(t, env, "source", false), Target: testClient(t, env, "target", false),
		Options: Options{Progress: func(p Progress) { last = p }}}
	start := time.Now()
	res, err := e.Move(ctx, Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("moved %d messages in %s", res.Relayed, time.Since(start))
	if res.Staged != 10_000 || res.Relayed != 10_000 || res.Resumed {
		t.Errorf("result %+v", res)
	}
	if last.Relayed != 10_000 {
		t.Errorf("last progress %+v", last)
	}
	if d := queueDepth(t, ctx, srcAdmin, src); d != 0 {
		t.Errorf("source still holds %d", d)
	}
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
	checkSameSet(t, want, consumeAll(t, ctx, tgtAdmin, tgt+"::"+tgt))
}
