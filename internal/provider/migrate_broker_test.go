package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// migrateQueuesDefault is how many queues the example migrates in make test;
// ARTEMIS_MIGRATE_QUEUES raises it (200 for the figures in the note of the whole-broker work).
const migrateQueuesDefault = 16

// migrateDepth is queue i's depth: a long tail, as a broker's queues have them (most short,
// every fourth empty, a few deep).
func migrateDepth(i int) int {
	switch {
	case i%4 == 0:
		return 0
	case i%23 == 5:
		return 2000
	case i%7 == 3:
		return 300
	}
	return 1 + (i*37)%60
}

// migrateFiltered says whether source queue i has a filter (its messages all match it), and
// migrateLarge how many large messages (over Artemis's 100 KiB threshold, stored as large
// messages) queue i holds besides its depth: some queues of a broker have filters, a few hold
// large messages.
func migrateFiltered(i int) bool { return i%9 == 2 }

func migrateLarge(i int) int {
	if i%67 == 11 {
		return 2
	}
	return 0
}

// migrateLargeSize is the size of each large message.
const migrateLargeSize = 1 << 20

// The examples/migrate-broker configuration, as an operator applies it: every queue of the
// source broker whose name matches the pattern is declared on the target like the source and
// moved, in one apply; each target queue then holds exactly its source's messages, every
// source queue is empty, the summary output counts them, and a second plan changes nothing.
func TestAccMigrateBroker_ExampleMovesEveryMatchingQueueInOneApply(t *testing.T) {
	env := testenv.Require(t)
	n := migrateQueuesDefault
	if s := os.Getenv("ARTEMIS_MIGRATE_QUEUES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("ARTEMIS_MIGRATE_QUEUES=%q: want a count of queues", s)
		}
	}
	raw, err := os.ReadFile("../../examples/migrate-broker/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	example := strings.Replace(string(raw), `provider "artemis" {}`, testAccAdminProviderBlock(env, "source", "target"), 1)
	if example == string(raw) {
		t.Fatal(`examples/migrate-broker/main.tf has no provider "artemis" {} block to point at the test brokers`)
	}
	src, tgt := testAccAdminClient(t, env, "source"), testAccAdminClient(t, env, "target")
	prefix := testenv.UniqueName("acc.migrate") + "."
	want := map[string][]string{}
	total := 0
	filtered, large := 0, 0
	for i := range n {
		name := fmt.Sprintf("%s%03d", prefix, i)
		spec := artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: -1}
		var props func(int) map[string]any
		if migrateFiltered(i) {
			spec.Filter, props = "kind = 'kept'", func(int) map[string]any { return map[string]any{"kind": "kept"} }
			filtered++
		}
		testAccQueue(t, env, "source", spec)
		want[name] = nil
		if d := migrateDepth(i); d > 0 {
			want[name] = testAccProduceWith(t, src, name, d, props)
			total += d
		}
		if l := migrateLarge(i); l > 0 {
			want[name] = append(want[name], testAccProduceSized(t, src, name, "large", l, migrateLargeSize)...)
			total += l
			large += l
		}
	}
	// Multicast addresses with two subscription queues each, their messages published by
	// Artemis's own CLI producer to the topic (stored as Core, which the source broker marks a
	// JMS queue when it converts them for the relay): each subscription is moved into the
	// subscription of the same name on the new broker, and only into it.
	topics := max(2, n/8)
	for j := range topics {
		address := fmt.Sprintf("%stopic.%02d", prefix, j)
		subs := []string{address + ".sub-a", address + ".sub-b"}
		for _, sub := range subs {
			testAccQueue(t, env, "source", artemis.QueueSpec{Name: sub, Address: address, RoutingType: "MULTICAST", Durable: true, RingSize: -1, MaxConsumers: -1})
		}
		d := 3 + 7*j
		env.Produce(t, "source", "topic://"+address, d)
		for _, sub := range subs {
			want[sub] = testAccBrowseIDs(t, src, sub)
			if len(want[sub]) != d {
				t.Fatalf("fixture: subscription %s holds %d messages, want %d", sub, len(want[sub]), d)
			}
			total += d
		}
		n += len(subs)
	}
	t.Logf("migrating %d queues (%d with a filter, %d subscriptions of %d multicast addresses), %d messages (%d of %d KiB)",
		n, filtered, 2*topics, topics, total, large, migrateLargeSize>>10)
	// The terraform CLI itself, not the test framework, whose state checks reject for_each.
	tf := newTerraformCLI(t, &artemisProvider{version: "test"})
	tf.write(t, "main.tf", example)
	tf.write(t, "terraform.tfvars", fmt.Sprintf("old_broker = %q\nnew_broker = %q\nqueue_pattern = %q\n",
		"source", "target", "^"+regexp.QuoteMeta(prefix)))
	tf.run(t, "init", "-input=false")
	start := time.Now()
	tf.run(t, "apply", "-input=false", "-auto-approve")
	t.Logf("one apply migrated %d queues (%d messages) in %s", n, total, time.Since(start).Round(time.Second))
	t.Cleanup(func() { tf.run(t, "destroy", "-input=false", "-auto-approve") })

	var summary struct {
		Queues   int            `json:"queues"`
		Messages int            `json:"messages"`
		ByQueue  map[string]int `json:"by_queue"`
	}
	if err := json.Unmarshal([]byte(tf.run(t, "output", "-json", "summary")), &summary); err != nil {
		t.Fatalf("terraform output summary: %v", err)
	}
	if summary.Queues != n || summary.Messages != total || len(summary.ByQueue) != n {
		t.Errorf("summary: %d queues, %d messages, %d queues listed; want %d, %d, %d", summary.Queues, summary.Messages, len(summary.ByQueue), n, total, n)
	}
	for name, ids := range want {
		if err := checkQueueDepth(src, name, 0)(nil); err != nil {
			t.Error(err)
		}
		if summary.ByQueue[name] != len(ids) {
			t.Errorf("summary: %s moved %d, want %d", name, summary.ByQueue[name], len(ids))
		}
		// Consumed, so that the destroy at the end finds the new queues empty.
		if err := checkQueueHoldsExactly(tgt, name, ids)(nil); err != nil {
			t.Error(err)
		}
	}
	// A second plan of the same configuration changes nothing.
	if out := tf.run(t, "plan", "-input=false", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("the second plan is not empty:\n%s", out)
	}
}

// testAccBrowseIDs returns the message ids of a queue, on whatever address it is, without
// consuming them.
func testAccBrowseIDs(t *testing.T, c *artemis.Client, queue string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b, err := conn.NewBrowser(ctx, q.FQQN(), artemis.BrowserOptions{Credit: 1000, IdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	var ids []string
	for int64(len(ids)) < q.MessageCount {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		ids = append(ids, fmt.Sprint(msg.Properties.MessageID))
	}
	return ids
}

// checkQueueDepth checks that queue holds depth messages.
func checkQueueDepth(c *artemis.Client, queue string, depth int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		q, err := c.Queue(ctx, queue)
		if err != nil {
			return err
		}
		if q.MessageCount != depth {
			return fmt.Errorf("queue %s on %s holds %d messages, want %d", queue, c.Name(), q.MessageCount, depth)
		}
		return nil
	}
}

// testAccProduceSized sends n durable messages of size bytes each, with message ids
// "<queue>-<tag>-<i>" and the property kind = 'kept'.
func testAccProduceSized(t *testing.T, c *artemis.Client, queue, tag string, n, size int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids := make([]string, n)
	transfertest.Produce(t, ctx, c, queue, n, func(i int) *amqp.Message {
		ids[i] = fmt.Sprintf("%s-%s-%d", queue, tag, i)
		return &amqp.Message{Header: &amqp.MessageHeader{Durable: true},
			Properties: &amqp.MessageProperties{MessageID: ids[i]}, Data: [][]byte{bytes.Repeat([]byte{'L'}, size)},
			// Matches the filter of a filtered source queue, and is ignored by the others.
			ApplicationProperties: map[string]any{"kind": "kept"}}
	})
	return ids
}
