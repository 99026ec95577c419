package provider

import (
	"context"
	"fmt"
	"sort"
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
	bySet map[*brokerSet][]string
}

func (c *canaryCounter) probed(set *brokerSet, broker, canary string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySet == nil {
		c.bySet = map[*brokerSet][]string{}
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
		env.Produce(t, n, queue+"::"+queue, perNode[n])
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
