package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// migrateFixture is the old broker of a migration test: queues named prefix*, and the
// message ids each holds.
type migrateFixture struct {
	prefix    string
	want      map[string][]string
	total     int
	addresses int
}

// newMigrateFixture makes n queues of long-tailed depth on the source broker, some with a
// filter and a few with large messages, and max(2, n/8) multicast addresses with two
// subscription queues each.
func newMigrateFixture(t *testing.T, env *testenv.Env, n int) *migrateFixture {
	t.Helper()
	src := testAccAdminClient(t, env, "source")
	f := &migrateFixture{prefix: testenv.UniqueName("acc.migrate") + ".", want: map[string][]string{}}
	filtered, large := 0, 0
	for i := range n {
		name := fmt.Sprintf("%s%03d", f.prefix, i)
		spec := artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: -1}
		var props func(int) map[string]any
		if migrateFiltered(i) {
			spec.Filter, props = "kind = 'kept'", func(int) map[string]any { return map[string]any{"kind": "kept"} }
			filtered++
		}
		testAccQueue(t, env, "source", spec)
		f.addresses++
		f.want[name] = nil
		if d := migrateDepth(i); d > 0 {
			f.want[name] = testAccProduceWith(t, src, name, d, props)
			f.total += d
		}
		if l := migrateLarge(i); l > 0 {
			f.want[name] = append(f.want[name], testAccProduceSized(t, src, name, "large", l, migrateLargeSize)...)
			f.total += l
			large += l
		}
	}
	// Multicast addresses with two subscription queues each, their messages published by
	// Artemis's own CLI producer to the topic (stored as Core, which the source broker marks a
	// JMS queue when it converts them for the relay): each subscription is moved into the
	// subscription of the same name on the new broker, and only into it.
	topics := max(2, n/8)
	for j := range topics {
		address := fmt.Sprintf("%stopic.%02d", f.prefix, j)
		subs := []string{address + ".sub-a", address + ".sub-b"}
		f.addresses++
		for _, sub := range subs {
			testAccQueue(t, env, "source", artemis.QueueSpec{Name: sub, Address: address, RoutingType: "MULTICAST", Durable: true, RingSize: -1, MaxConsumers: -1})
		}
		d := 3 + 7*j
		env.Produce(t, "source", "topic://"+address, d)
		for _, sub := range subs {
			f.want[sub] = testAccBrowseIDs(t, src, sub)
			if len(f.want[sub]) != d {
				t.Fatalf("fixture: subscription %s holds %d messages, want %d", sub, len(f.want[sub]), d)
			}
			f.total += d
		}
	}
	t.Logf("migrating %d queues (%d with a filter, %d subscriptions of %d multicast addresses), %d messages (%d of %d KiB)",
		len(f.want), filtered, 2*topics, topics, f.total, large, migrateLargeSize>>10)
	return f
}

// migrateExample reads a file of examples/migrate-broker; with brokers named, its empty
// provider block is pointed at those test brokers.
func migrateExample(t *testing.T, env *testenv.Env, name string, brokers ...string) string {
	t.Helper()
	raw, err := os.ReadFile("../../examples/migrate-broker/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if len(brokers) == 0 {
		return string(raw)
	}
	const empty = `provider "artemis" {}`
	if !strings.Contains(string(raw), empty) {
		t.Fatalf("examples/migrate-broker/%s has no %s block to point at the test brokers", name, empty)
	}
	return strings.Replace(string(raw), empty, testAccAdminProviderBlock(env, brokers...), 1)
}

// migrationRecipe is the two steps of examples/migrate-broker as an operator runs them: step
// one in its own folder writes the inventory, step two declares the new broker's objects from
// it and moves every queue.
type migrationRecipe struct {
	inventory, config *terraformCLI
}

// newMigrationRecipe runs step one for the queues named prefix* on "source", writes the
// inventory into step two's folder with `terraform output -json`, and initializes step two
// (brokers "source" as old and "target" as new). Nothing is applied in step two yet.
func newMigrationRecipe(t *testing.T, env *testenv.Env, prefix string) *migrationRecipe {
	t.Helper()
	// The terraform CLI itself, not the test framework, whose state checks reject for_each.
	m := &migrationRecipe{inventory: newTerraformCLI(t, &artemisProvider{version: "test"}), config: newTerraformCLI(t, &artemisProvider{version: "test"})}
	m.inventory.write(t, "main.tf", migrateExample(t, env, "inventory/main.tf", "source"))
	m.inventory.write(t, "terraform.tfvars", fmt.Sprintf("old_broker = %q\nqueue_pattern = %q\n", "source", "^"+regexp.QuoteMeta(prefix)))
	m.inventory.run(t, "init", "-input=false")
	m.inventory.run(t, "apply", "-input=false", "-auto-approve")
	inventory := m.inventory.output(t, "inventory")
	m.config.write(t, "inventory.auto.tfvars.json", inventory)

	m.config.write(t, "main.tf", migrateExample(t, env, "main.tf", "source", "target"))
	m.config.write(t, "move.tf", migrateExample(t, env, "move.tf"))
	m.config.write(t, "terraform.tfvars", fmt.Sprintf("old_broker = %q\nnew_broker = %q\n", "source", "target"))
	m.config.run(t, "init", "-input=false")
	return m
}

// destroyOnCleanup destroys what step two made on the new broker at the end of the test, with
// prevent_destroy lifted as an operator rolling back a migration would lift it.
func (m *migrationRecipe) destroyOnCleanup(t *testing.T) {
	t.Cleanup(func() {
		main := filepath.Join(m.config.dir, "main.tf")
		raw, err := os.ReadFile(main)
		if err != nil {
			t.Error(err)
			return
		}
		m.config.write(t, "main.tf", strings.ReplaceAll(string(raw), "prevent_destroy = true", "prevent_destroy = false"))
		m.config.run(t, "destroy", "-input=false", "-auto-approve")
	})
}

// The examples/migrate-broker recipe, as an operator applies it: step one writes down every
// queue of the source broker whose name matches the pattern; step two's plan warns once, not
// once a queue; its one apply declares each queue on the target like the source and moves it;
// each target queue then holds exactly its source's messages, every source queue is empty, the
// summary output counts them, and a second plan changes nothing.
func TestAccMigrateBroker_ExampleMovesEveryMatchingQueueInOneApply(t *testing.T) {
	env := testenv.Require(t)
	n := migrateQueuesDefault
	if s := os.Getenv("ARTEMIS_MIGRATE_QUEUES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("ARTEMIS_MIGRATE_QUEUES=%q: want a count of queues", s)
		}
	}
	f := newMigrateFixture(t, env, n)
	src, tgt := testAccAdminClient(t, env, "source"), testAccAdminClient(t, env, "target")
	m := newMigrationRecipe(t, env, f.prefix)
	tf := m.config

	// The plan warns a reviewer once, however many queues, that it did not prove what needs
	// writing (permissions, duplicate detection) and apply will: nothing per queue, since every
	// target is created by the same apply and an empty queue moved whole leaves nothing to check.
	plan := planActions(t, tf)
	if len(plan.warnings) != 1 || !strings.Contains(plan.warnings[0], ": Apply proves what this plan could not without writing (target.broker): ") {
		t.Errorf("the migration's plan gave %d warnings, want only the one that apply proves what the plan could not without writing:\n%s",
			len(plan.warnings), strings.Join(plan.warnings, "\n"))
	}
	if got, want := plan.count("create"), 2*len(f.want)+2*f.addresses; got != want {
		t.Errorf("the plan creates %d objects, want %d: a queue and a transfer for each of %d queues, an address and its settings for each of %d addresses",
			got, want, len(f.want), f.addresses)
	}

	start := time.Now()
	tf.run(t, "apply", "-input=false", "-auto-approve")
	t.Logf("one apply migrated %d queues (%d messages) in %s", len(f.want), f.total, time.Since(start).Round(time.Second))
	m.destroyOnCleanup(t)

	var summary struct {
		Queues   int            `json:"queues"`
		Messages int            `json:"messages"`
		ByQueue  map[string]int `json:"by_queue"`
	}
	if err := json.Unmarshal([]byte(tf.output(t, "summary")), &summary); err != nil {
		t.Fatalf("terraform output summary: %v", err)
	}
	if summary.Queues != len(f.want) || summary.Messages != f.total || len(summary.ByQueue) != len(f.want) {
		t.Errorf("summary: %d queues, %d messages, %d queues listed; want %d, %d, %d", summary.Queues, summary.Messages, len(summary.ByQueue), len(f.want), f.total, len(f.want))
	}
	for name, ids := range f.want {
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
	if code, out := tf.exitCode(t, "plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Errorf("the second plan is not empty (exit %d):\n%s", code, out)
	}
}

// The last day of examples/migrate-broker, as the guide tells it: once the recipe has moved every
// queue, the old broker is stopped (its queues gone with it), move.tf is replaced by
// last-day/removed.tf and the old broker taken out of the provider's brokers. The plan then
// forgets the transfers and changes nothing on the new broker, and the provider warns of
// nothing; after its
// apply, `terraform plan -detailed-exitcode` exits 0 and the new broker still holds every
// message.
func TestAccMigrateBroker_LastDayPlansNoChangeOnTheNewBrokerWithTheOldBrokerGone(t *testing.T) {
	env := testenv.RequireOwned(t)
	f := newMigrateFixture(t, env, 4)
	tgt := testAccAdminClient(t, env, "target")
	m := newMigrationRecipe(t, env, f.prefix)
	tf := m.config
	tf.run(t, "apply", "-input=false", "-auto-approve")
	m.destroyOnCleanup(t)
	if code, out := tf.exitCode(t, "plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("with the old broker up, the plan after the migration is not empty (exit %d):\n%s", code, out)
	}

	// The old broker goes away; it is started again for the tests after this one (before the
	// fixture's own cleanup, which deletes its queues).
	if err := env.StopBroker("source"); err != nil {
		t.Fatalf("StopBroker: %v", err)
	}
	t.Cleanup(func() {
		if err := env.StartBroker("source"); err != nil {
			t.Errorf("StartBroker: %v", err)
		}
	})
	// Nothing of step two reads the old broker: before its configuration is removed, the plan
	// still changes nothing.
	if code, out := tf.exitCode(t, "plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Errorf("with the old broker stopped, the plan of the unchanged configuration is not empty (exit %d):\n%s", code, out)
	}

	// Its configuration goes: move.tf replaced by last-day/removed.tf, the old broker's key out of
	// the provider's brokers and of terraform.tfvars.
	if err := os.Remove(filepath.Join(tf.dir, "move.tf")); err != nil {
		t.Fatal(err)
	}
	tf.write(t, "removed.tf", migrateExample(t, env, "last-day/removed.tf"))
	tf.write(t, "main.tf", migrateExample(t, env, "main.tf", "target"))
	tf.write(t, "terraform.tfvars", fmt.Sprintf("new_broker = %q\n", "target"))

	// The one warning is Terraform's own, listing the transfers it forgets: what this plan does,
	// for the reviewer to read. The provider adds none.
	plan := planActions(t, tf)
	if len(plan.warnings) != 1 || !strings.Contains(plan.warnings[0], ": Some objects will no longer be managed by Terraform: ") {
		t.Errorf("the last day's plan gave %d warnings, want only Terraform's list of the transfers it forgets:\n%s",
			len(plan.warnings), strings.Join(plan.warnings, "\n"))
	}
	for address, actions := range plan.actions {
		transfer := strings.HasPrefix(address, "artemis_queue_transfer.move[")
		switch {
		case transfer && actions != "forget":
			t.Errorf("the last day's plan does %s to %s, want forget", actions, address)
		case !transfer && actions != "no-op":
			t.Errorf("the last day's plan does %s to %s on the new broker, want nothing", actions, address)
		}
	}
	if got := plan.count("forget"); got != len(f.want) {
		t.Errorf("the last day's plan forgets %d transfers, want %d", got, len(f.want))
	}
	tf.run(t, "apply", "-input=false", "-auto-approve")
	if code, out := tf.exitCode(t, "plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Errorf("after the last day's apply, the plan is not empty (exit %d):\n%s", code, out)
	}
	for name, ids := range f.want {
		if err := checkQueueHoldsExactly(tgt, name, ids)(nil); err != nil {
			t.Error(err)
		}
	}
}

// plannedActions is what `terraform plan` would do: each resource instance's actions, joined
// with "-" ("create", "no-op", "forget", "delete-create"), and the summary and detail of each
// warning it gave.
type plannedActions struct {
	actions  map[string]string
	warnings []string
}

func (p plannedActions) count(actions string) int {
	n := 0
	for _, a := range p.actions {
		if a == actions {
			n++
		}
	}
	return n
}

// planActions plans tf's configuration as a reviewer reads it, through `terraform plan -json`
// for its warnings and `terraform show -json` of the saved plan for its actions.
func planActions(t *testing.T, tf *terraformCLI) plannedActions {
	t.Helper()
	p := plannedActions{actions: map[string]string{}}
	out := tf.run(t, "plan", "-input=false", "-json", "-out=review.tfplan")
	for _, line := range strings.Split(out, "\n") {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Severity string `json:"severity"`
				Summary  string `json:"summary"`
				Detail   string `json:"detail"`
				Address  string `json:"address"`
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.Type != "diagnostic" || msg.Diagnostic.Severity != "warning" {
			continue
		}
		p.warnings = append(p.warnings, msg.Diagnostic.Address+": "+msg.Diagnostic.Summary+": "+msg.Diagnostic.Detail)
	}
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(tf.run(t, "show", "-json", "review.tfplan")), &plan); err != nil {
		t.Fatalf("terraform show -json of the plan: %v", err)
	}
	for _, rc := range plan.ResourceChanges {
		p.actions[rc.Address] = strings.Join(rc.Change.Actions, "-")
	}
	return p
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
