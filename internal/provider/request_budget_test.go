package provider

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// brokerCounters stands between the provider and one broker: management through a counting
// HTTP proxy, AMQP through a TCP proxy that counts connections.
type brokerCounters struct {
	management *testenv.ManagementCounter
	amqp       *testenv.Proxy
}

func newBrokerCounters(t *testing.T, env *testenv.Env, broker string) brokerCounters {
	t.Helper()
	br := env.Brokers[broker]
	u, err := url.Parse(br.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	return brokerCounters{management: testenv.NewManagementCounter(t, br.ManagementURL), amqp: testenv.NewProxy(t, u.Host)}
}

func (c brokerCounters) reset() {
	c.management.Reset()
	c.amqp.ResetAccepted()
}

// countedProviderBlock is testAccProviderBlock for brokers reached through counters.
func countedProviderBlock(env *testenv.Env, counters map[string]brokerCounters) string {
	var b strings.Builder
	b.WriteString("provider \"artemis\" {\n  brokers = {\n")
	for _, n := range []string{"source", "target"} {
		c := counters[n]
		fmt.Fprintf(&b, "    %q = {\n", n)
		fmt.Fprintf(&b, "      amqp_urls      = [%q]\n", "amqp://"+c.amqp.Addr())
		fmt.Fprintf(&b, "      management_url = %q\n", c.management.URL())
		fmt.Fprintf(&b, "      username       = %q\n", env.TransferUser)
		fmt.Fprintf(&b, "      password       = %q\n", env.TransferPassword)
		b.WriteString("    }\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// requestBudget is what one terraform command may ask of one broker at most: management
// operations other than reads of queue attributes, those reads (the progress and depth polls
// among them, whose number grows with the time a move takes on a slow machine, so they have
// more room), console logins and AMQP connections.
type requestBudget struct {
	operations, queueReads, logins, amqpConnections int
}

// queueReads are the counter's operation kinds that read queue attributes.
var queueReads = []string{"read queues"}

func checkBudget(t *testing.T, what, broker string, c brokerCounters, budget requestBudget) {
	t.Helper()
	got := c.management.Counts()
	conns := c.amqp.Accepted()
	reads := 0
	for _, kind := range queueReads {
		reads += got.ByOperation[kind]
	}
	others := got.Operations - reads
	t.Logf("%s, %s broker: %d HTTP requests carrying %d management operations (%d of them reads of queue attributes), %d logins, %d AMQP connections\n%s",
		what, broker, got.HTTPRequests, got.Operations, reads, got.Logins, conns, got.Summary())
	if others > budget.operations || reads > budget.queueReads || got.Logins > budget.logins || conns > budget.amqpConnections {
		t.Errorf("%s asked the %s broker for %d management operations besides %d reads of queue attributes, %d logins and %d AMQP connections; "+
			"the budget is %d, %d, %d and %d: a change made it ask more (see the log for each operation)",
			what, broker, others, reads, got.Logins, conns,
			budget.operations, budget.queueReads, budget.logins, budget.amqpConnections)
	}
}

// The management requests and AMQP connections of a plan of one transfer and of the apply that
// moves a queue of 50 messages are held to a budget, per broker, so that the fixed cost of a move
// cannot silently grow back. Each terraform command configures the provider afresh, as a new
// provider process would, so the counts are those of one process per command.
func TestAccQueueTransfer_ASmallMoveStaysWithinItsManagementBudget(t *testing.T) {
	f := newTransferFixture(t, 50)
	counters := map[string]brokerCounters{
		"source": newBrokerCounters(t, f.env, "source"),
		"target": newBrokerCounters(t, f.env, "target"),
	}
	tf := newTerraformCLI(t, &artemisProvider{version: "test"})
	tf.write(t, "main.tf", countedProviderBlock(f.env, counters)+fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}
`, f.src, f.tgt))
	tf.run(t, "init", "-input=false")

	for _, c := range counters {
		c.reset()
	}
	tf.run(t, "plan", "-input=false", "-out=tfplan")
	checkBudget(t, "terraform plan of one transfer", "source", counters["source"], planSourceBudget)
	checkBudget(t, "terraform plan of one transfer", "target", counters["target"], planTargetBudget)

	for _, c := range counters {
		c.reset()
	}
	tf.run(t, "apply", "-input=false", "tfplan")
	checkBudget(t, "terraform apply of a move of 50 messages", "source", counters["source"], moveSourceBudget)
	checkBudget(t, "terraform apply of a move of 50 messages", "target", counters["target"], moveTargetBudget)

	if got := f.depth(t, f.tgtAdmin, f.tgt); got != 50 {
		t.Errorf("the target holds %d messages after the move, want 50", got)
	}
}

// The budgets: what the provider asked on 2.40 when they were set (operations besides queue
// reads, then queue reads: a plan 3 and 1 of the source, 8 and 1 of the target, 2 AMQP connections
// to each; the apply of the move 39 and 17 of the source with 9 connections, 19 and 7 of the
// target with 5; one login each), with a little room, and more for the queue reads. Lower them
// when a change asks less; never raise them without saying why in the change.
var (
	planSourceBudget = requestBudget{operations: 5, queueReads: 3, logins: 1, amqpConnections: 2}
	planTargetBudget = requestBudget{operations: 10, queueReads: 3, logins: 1, amqpConnections: 2}
	moveSourceBudget = requestBudget{operations: 42, queueReads: 40, logins: 1, amqpConnections: 10}
	moveTargetBudget = requestBudget{operations: 22, queueReads: 20, logins: 1, amqpConnections: 6}
)

// The moves of one apply from one source broker to one target prove what only a write proves
// once, not once each: one staging canary on the source (its one moveMessage by id, a call no
// run makes) and one duplicate-detection canary on the target (its one createQueue there).
func TestAccQueueTransfer_MovesOfOneApplyShareTheirCanaries(t *testing.T) {
	tf, counters, fixtures := countedTransfers(t, 3, 10)
	tf.run(t, "apply", "-input=false", "-auto-approve")

	src, tgt := counters["source"].management.Counts(), counters["target"].management.Counts()
	t.Logf("an apply of 3 moves of 10 messages: the source answered %d requests, the target %d\nsource:\n%starget:\n%s",
		src.HTTPRequests, tgt.HTTPRequests, src.Summary(), tgt.Summary())
	if n := src.ByOperation["exec queues.moveMessage"]; n != 1 {
		t.Errorf("3 moves from one source made %d staging canaries (moveMessage by id), want 1", n)
	}
	if n := tgt.ByOperation["exec broker.createQueue"]; n != 1 {
		t.Errorf("3 moves to one target made %d duplicate-detection canaries (createQueue on the target), want 1", n)
	}
	for _, f := range fixtures {
		if got := f.depth(t, f.tgtAdmin, f.tgt); got != 10 {
			t.Errorf("target queue %s holds %d messages after the apply, want 10", f.tgt, got)
		}
	}
}

// A plan of many transfers between the same brokers reads each broker's queues once, in one
// request, whatever the number of transfers: a plan of a whole broker's queues costs the brokers
// about what a plan of one does, plus what each transfer needs counted.
func TestAccQueueTransfer_APlanOfManyTransfersReadsEachBrokersQueuesOnce(t *testing.T) {
	const transfers = 5
	tf, counters, _ := countedTransfers(t, transfers, 3)
	tf.run(t, "plan", "-input=false")
	for _, broker := range []string{"source", "target"} {
		got := counters[broker].management.Counts()
		t.Logf("a plan of %d transfers, %s broker: %d requests\n%s", transfers, broker, got.HTTPRequests, got.Summary())
		if n := got.ByOperation["read queues"] + got.ByOperation["search queues"]; n != 1 {
			t.Errorf("a plan of %d transfers read or searched the queues of the %s broker %d times, want once", transfers, broker, n)
		}
	}
}

// countedTransfers is an initialised configuration of n transfers, each of a queue of messages
// messages, from the source broker to the target through counters reset for what runs next.
func countedTransfers(t *testing.T, n, messages int) (*terraformCLI, map[string]brokerCounters, []*transferFixture) {
	t.Helper()
	env := testenv.Require(t)
	counters := map[string]brokerCounters{
		"source": newBrokerCounters(t, env, "source"),
		"target": newBrokerCounters(t, env, "target"),
	}
	var config strings.Builder
	config.WriteString(countedProviderBlock(env, counters))
	var fixtures []*transferFixture
	for i := range n {
		f := newTransferFixture(t, messages)
		fixtures = append(fixtures, f)
		fmt.Fprintf(&config, `
resource "artemis_queue_transfer" "t%d" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}
`, i, f.src, f.tgt)
	}
	tf := newTerraformCLI(t, &artemisProvider{version: "test"})
	tf.write(t, "main.tf", config.String())
	tf.run(t, "init", "-input=false")
	for _, c := range counters {
		c.reset()
	}
	return tf, counters, fixtures
}
