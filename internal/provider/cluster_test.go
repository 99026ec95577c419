package provider

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// barrierLimit bounds how long a run waits at the barrier for the others: only a test whose
// runs do not overlap waits this long, and it then fails on that.
const barrierLimit = 2 * time.Minute

// runBarrier proves that runs relay at the same time: each run's first confirmation waits
// until every one of want runs has had its first, so the apply completes only if all of them
// were relaying at once. A run that waits out barrierLimit is counted as not concurrent.
type runBarrier struct {
	want     int64
	arrived  atomic.Int64
	all      chan struct{}
	once     sync.Once
	timedOut atomic.Int64
}

func newRunBarrier(want int64) *runBarrier { return &runBarrier{want: want, all: make(chan struct{})} }

func (b *runBarrier) hooks(context.CancelFunc) transfer.Hooks {
	var first sync.Once
	return transfer.Hooks{AfterConfirm: func() {
		first.Do(func() {
			if b.arrived.Add(1) == b.want {
				b.once.Do(func() { close(b.all) })
			}
			select {
			case <-b.all:
			case <-time.After(barrierLimit):
				b.timedOut.Add(1)
			}
		})
	}}
}

// canaryCounter counts the duplicate-detection canaries each configured provider sent.
type canaryCounter struct {
	mu    sync.Mutex
	bySet map[*providerRuntime][]string
}

func (c *canaryCounter) probed(set *providerRuntime, broker, canary string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySet == nil {
		c.bySet = map[*providerRuntime][]string{}
	}
	c.bySet[set] = append(c.bySet[set], broker+"/"+canary)
}

// check fails when a configured provider (one terraform plan or apply) sent more than one
// canary, or when none sent any.
func (c *canaryCounter) check(*terraform.State) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bySet) == 0 {
		return fmt.Errorf("no duplicate-detection canary was sent")
	}
	for _, sent := range c.bySet {
		if len(sent) != 1 {
			return fmt.Errorf("one terraform command sent %d duplicate-detection canaries, want 1: %v", len(sent), sent)
		}
	}
	return nil
}

// canaryWarning is what the broker's AMQ222059 warning about the repeated canary message
// says of canary queue name (see transfer.probeDuplicateDetection).
func canaryWarning(name string) string {
	return "applicationProperties={_AMQ_DUPL_ID=studio:canary:" + name + "}"
}

// all lists every canary sent, as broker/canary queue.
func (c *canaryCounter) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, sent := range c.bySet {
		out = append(out, sent...)
	}
	return out
}

// perCommand lists how many canaries each configured provider sent.
func (c *canaryCounter) perCommand() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, sent := range c.bySet {
		out = append(out, len(sent))
	}
	return out
}

// listedIDs returns the JMS message ids of a queue's messages (at most the broker's
// management-browse-page-size, 200 by default), as the AMQP message-id the relay carries.
func listedIDs(t *testing.T, c *artemis.Client, queue string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	msgs, err := c.ListMessages(ctx, queue, "")
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(msgs))
	for _, m := range msgs {
		ids = append(ids, fmt.Sprint(m["userID"]))
	}
	return ids
}

// TestAccQueueTransfer_MovesAQueueOffEveryNodeOfAClusterWithForEach puts messages on the same
// queue on both nodes of the two-node cluster and moves it with one artemis_queue_transfer and
// for_each over the nodes, as the clusters guide does, into the target broker. Both runs relay
// at once (runBarrier), the target holds exactly the messages of both nodes, each once (by
// message id), neither node keeps any or a staging queue, and each terraform command sent one
// duplicate-detection canary for both transfers.
func TestAccQueueTransfer_MovesAQueueOffEveryNodeOfAClusterWithForEach(t *testing.T) {
	env := testenv.Require(t)
	nodes := []string{"node1", "node2"}
	for _, n := range nodes {
		env.Broker(t, n)
	}
	queue, tgt := testenv.UniqueName("acc.cluster.orders"), testenv.UniqueName("acc.cluster.tgt")
	perNode := map[string]int{"node1": 150, "node2": 120}
	admins := map[string]*artemis.Client{}
	var want []string
	for _, n := range nodes {
		admins[n] = testAccAdminClient(t, env, n)
		testAccQueue(t, env, n, artemis.QueueSpec{Name: queue, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: -1})
	}
	testAccQueue(t, env, "target", artemis.QueueSpec{Name: tgt, Durable: true, RingSize: -1, MaxConsumers: -1})
	specOf := func(node string) transfer.Spec {
		return transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: node, Queue: queue},
			Target: transfer.Endpoint{Broker: "target", Queue: tgt}}
	}
	// A failed run leaves its queues on its node (nothing is lost); the test removes them.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, n := range nodes {
			left, _ := admins[n].ListQueues(ctx, transfer.StagingPrefix+specOf(n).Key()+"-")
			for _, q := range left {
				_ = admins[n].DestroyQueue(ctx, q.Name)
				_ = admins[n].RemoveAddressSettings(ctx, q.Name)
			}
		}
	})
	for _, n := range nodes {
		// Artemis's own CLI producer over Core, as applications would; with no consumer on
		// either node the cluster keeps each message on the node it was sent to.
		env.Produce(t, n, artemis.FQQN(queue, queue), perNode[n])
		ids := listedIDs(t, admins[n], queue)
		if len(ids) != perNode[n] {
			t.Fatalf("%s holds %d messages of %s, want %d", n, len(ids), queue, perNode[n])
		}
		want = append(want, ids...)
	}
	sort.Strings(want)
	for i := 1; i < len(want); i++ {
		if want[i] == want[i-1] {
			t.Fatalf("message id %s is on both nodes", want[i])
		}
	}

	barrier := newRunBarrier(int64(len(nodes)))
	canaries := &canaryCounter{}
	tf := newTerraformCLI(t, &artemisProvider{version: "test", runHooks: barrier.hooks, canaryProbed: canaries.probed})
	tf.write(t, "main.tf", testAccProviderBlock(env, "node1", "node2", "target")+fmt.Sprintf(`
resource "artemis_queue_transfer" "drain" {
  for_each = toset(["node1", "node2"])

  source     = { broker = each.key, queue = %q }
  target     = { broker = "target", queue = %q }
  batch_size = 50
}
`, queue, tgt))
	tf.run(t, "init", "-input=false")
	start := time.Now()
	tf.run(t, "apply", "-input=false", "-auto-approve")
	t.Logf("terraform apply moved %d messages off two nodes in %s", len(want), time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { tf.run(t, "destroy", "-input=false", "-auto-approve") })

	for _, n := range nodes {
		if got := tf.stateValue(t, `artemis_queue_transfer.drain["`+n+`"]`, "messages_relayed"); got != fmt.Sprint(perNode[n]) {
			t.Errorf("%s: messages_relayed %s, want %d", n, got, perNode[n])
		}
	}
	if barrier.arrived.Load() != int64(len(nodes)) || barrier.timedOut.Load() != 0 {
		t.Errorf("the runs did not relay at the same time: %d of %d reached their first confirmation, %d waited out the barrier",
			barrier.arrived.Load(), len(nodes), barrier.timedOut.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range nodes {
		q, err := admins[n].Queue(ctx, queue)
		if err != nil {
			t.Fatal(err)
		}
		// The queues of this transfer's runs, by the spec key that starts their names.
		left, err := admins[n].ListQueues(ctx, transfer.StagingPrefix+specOf(n).Key()+"-")
		if err != nil {
			t.Fatal(err)
		}
		if q.MessageCount != 0 || len(left) != 0 {
			t.Errorf("%s still holds %d messages of %s and %d queues of the run", n, q.MessageCount, queue, len(left))
		}
	}
	if err := checkQueueHoldsExactly(testAccAdminClient(t, env, "target"), tgt, want)(nil); err != nil {
		t.Error(err)
	}
	if err := canaries.check(nil); err != nil {
		t.Error(err)
	}
	t.Logf("duplicate-detection canaries per terraform command that sent any: %v", canaries.perCommand())
}

// TestAccQueueTransfer_EveryQueueOfABrokerWithOneCanaryPerCommand moves ten queues of the
// source broker, listed by artemis_queues, into one target queue with for_each, as the
// artemis_queues example does, through the Terraform CLI: with plan_sends_canaries, terraform
// plan sends one duplicate-detection canary for the ten transfers, and terraform apply one for its own plan and
// one for the changes (without sharing it would be ten, then twenty at apply's plan and twenty at
// its changes); the target broker's log holds one AMQ222059 warning for each; the target holds
// every message once.
func TestAccQueueTransfer_EveryQueueOfABrokerWithOneCanaryPerCommand(t *testing.T) {
	env := testenv.Require(t)
	const queues, perQueue = 10, 5
	token := testenv.UniqueName("acc.many")
	srcAdmin, tgtAdmin := testAccAdminClient(t, env, "source"), testAccAdminClient(t, env, "target")
	tgt := token + ".target"
	testAccQueue(t, env, "target", artemis.QueueSpec{Name: tgt, Durable: true, RingSize: -1, MaxConsumers: -1})
	var want []string
	for i := 0; i < queues; i++ {
		q := fmt.Sprintf("%s.src.%02d", token, i)
		testAccQueue(t, env, "source", artemis.QueueSpec{Name: q, Durable: true, RingSize: -1, MaxConsumers: -1})
		want = append(want, testAccProduce(t, srcAdmin, q, perQueue)...)
	}
	if len(want) != queues*perQueue {
		t.Fatalf("the source queues hold %d messages, want %d", len(want), queues*perQueue)
	}

	canaries := &canaryCounter{}
	tf := newTerraformCLI(t, &artemisProvider{version: "test", canaryProbed: canaries.probed})
	tf.write(t, "main.tf", withPlanSendsCanaries(testAccProviderBlock(env, "source", "target"))+fmt.Sprintf(`
data "artemis_queues" "sources" {
  broker     = "source"
  name_regex = %q
}

resource "artemis_queue_transfer" "all" {
  for_each = data.artemis_queues.sources.queues

  source = { broker = "source", queue = each.key }
  target = { broker = "target", queue = %q }
}
`, "^"+regexp.QuoteMeta(token+".src."), tgt))
	tf.run(t, "init", "-input=false")
	tf.run(t, "plan", "-input=false")
	if got := canaries.perCommand(); len(got) != 1 || got[0] != 1 {
		t.Errorf("terraform plan of %d transfers sent %v canaries, want [1]", queues, got)
	}
	tf.run(t, "apply", "-input=false", "-auto-approve")
	t.Cleanup(func() { tf.run(t, "destroy", "-input=false", "-auto-approve") })
	got := canaries.perCommand()
	sort.Ints(got)
	if len(got) != 3 || got[0] != 1 || got[2] != 1 {
		t.Errorf("terraform plan and apply of %d transfers sent %v canaries per configured provider, want [1 1 1]", queues, got)
	}
	for _, sent := range canaries.all() {
		broker, canary, _ := strings.Cut(sent, "/")
		if broker != "target" {
			t.Errorf("a canary went to %q", broker)
		}
		if n := env.CountInLog(t, "target", canaryWarning(canary)); n != 1 {
			t.Errorf("the target's log has %d AMQ222059 warnings for %s, want 1", n, canary)
		}
	}
	t.Logf("%d transfers: %d duplicate-detection canaries for terraform plan and apply", queues, len(canaries.all()))
	for i := 0; i < queues; i++ {
		addr := fmt.Sprintf(`artemis_queue_transfer.all["%s.src.%02d"]`, token, i)
		if got := tf.stateValue(t, addr, "messages_relayed"); got != fmt.Sprint(perQueue) {
			t.Errorf("%s: messages_relayed %s, want %d", addr, got, perQueue)
		}
	}
	if err := checkQueueHoldsExactly(tgtAdmin, tgt, want)(nil); err != nil {
		t.Error(err)
	}
}
