package move

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// The cluster nodes node1 and node2 are two independent brokers: each has its own journal and
// its own duplicate-id cache. These tests give a target broker key management_url of node1 and
// AMQP URLs that (also) reach node2, the shape that doubled messages on failover.

// nodeTarget is a transfer-user client named "target" whose management is node1 and whose AMQP
// URLs are amqpURLs.
func nodeTarget(t *testing.T, env *testenv.Env, amqpURLs ...string) *artemis.Client {
	t.Helper()
	c, err := artemis.New(artemis.Config{Name: "target", AMQPURLs: amqpURLs, ManagementURL: env.Broker(t, "node1").ManagementURL,
		Username: env.TransferUser, Password: env.TransferPassword, ConnectTimeout: 5 * time.Second, RequestTimeout: 70 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nodeFixture is a source queue with n messages and a target queue of one name on both nodes.
type nodeFixture struct {
	srcAdmin, node1, node2 *artemis.Client
	src, tgt               string
	want                   []string
}

func newNodeFixture(t *testing.T, env *testenv.Env, prefix string, n int) *nodeFixture {
	t.Helper()
	ctx := transfertest.Ctx(t, 2*time.Minute)
	f := &nodeFixture{srcAdmin: testenv.Client(t, env, "source", true), node1: testenv.Client(t, env, "node1", true), node2: testenv.Client(t, env, "node2", true),
		src: testenv.UniqueName(prefix + ".src"), tgt: testenv.UniqueName(prefix + ".tgt")}
	testenv.FixtureQueue(t, ctx, f.srcAdmin, f.src)
	// The same queue on both nodes, so that a message sent to node2 would stay there, visible.
	testenv.FixtureQueue(t, ctx, f.node1, f.tgt)
	testenv.FixtureQueue(t, ctx, f.node2, f.tgt)
	env.Produce(t, "source", "queue://"+f.src, n)
	if f.want = transfertest.BrowseIDs(t, ctx, f.srcAdmin, f.src); len(f.want) != n {
		t.Fatalf("browsed %d source messages, produced %d", len(f.want), n)
	}
	return f
}

func (f *nodeFixture) spec() core.Spec {
	return core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: f.src}, Target: core.Endpoint{Broker: "target", Queue: f.tgt}}
}

func nodeID(t *testing.T, c *artemis.Client) string {
	t.Helper()
	info, err := c.BrokerInfo(transfertest.Ctx(t, 30*time.Second))
	if err != nil || info.NodeID == "" {
		t.Fatalf("BrokerInfo: %+v, %v", info, err)
	}
	return info.NodeID
}

func findingsWith(findings []preflight.Finding, summary string) []preflight.Finding {
	var out []preflight.Finding
	for _, f := range findings {
		if f.Summary == summary {
			out = append(out, f)
		}
	}
	return out
}

func TestPreflight_RefusesTargetWhoseAMQPURLsReachOnlyAnotherNode(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 3*time.Minute)
	f := newNodeFixture(t, env, "nodes.refused", 20)
	node2 := env.Broker(t, "node2")
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: nodeTarget(t, env, node2.AMQPURL)}}

	findings, err := e.Preflight(ctx, f.spec(), true)
	if err != nil {
		t.Fatal(err)
	}
	refused := findingsWith(findings, "No AMQP URL reaches the management node")
	if len(refused) != 1 || refused[0].Severity != preflight.Error || refused[0].Attribute != "target.broker" ||
		!strings.Contains(refused[0].Detail, node2.AMQPURL+": node "+nodeID(t, f.node2)+", another node") ||
		!strings.Contains(refused[0].Detail, nodeID(t, f.node1)) {
		t.Fatalf("want one refusal on target.broker naming %s and node2's id, got %+v", node2.AMQPURL, findings)
	}

	_, err = e.Move(ctx, f.spec())
	var refusedErr *core.RefusedError
	if !errors.As(err, &refusedErr) {
		t.Fatalf("Move: %v, want a refusal", err)
	}
	if s, n1, n2 := transfertest.QueueDepth(t, ctx, f.srcAdmin, f.src), transfertest.QueueDepth(t, ctx, f.node1, f.tgt), transfertest.QueueDepth(t, ctx, f.node2, f.tgt); s != 20 || n1 != 0 || n2 != 0 {
		t.Fatalf("after the refusal: source %d, node1 %d, node2 %d; want 20, 0, 0", s, n1, n2)
	}
}

// TestMove_TargetURLsOfTwoNodesWarnAtPlanAndUseOnlyTheManagementNode lists node2's URL first (a
// client trying URLs in order reaches node2) and last.
func TestMove_TargetURLsOfTwoNodesWarnAtPlanAndUseOnlyTheManagementNode(t *testing.T) {
	env := testenv.Require(t)
	n1, n2 := env.Broker(t, "node1"), env.Broker(t, "node2")
	for _, order := range []struct {
		name string
		urls []string
	}{{"node1 first", []string{n1.AMQPURL, n2.AMQPURL}}, {"node2 first", []string{n2.AMQPURL, n1.AMQPURL}}} {
		t.Run(order.name, func(t *testing.T) {
			ctx := transfertest.Ctx(t, 4*time.Minute)
			f := newNodeFixture(t, env, "nodes.two", 300)
			node1ID, node2ID := nodeID(t, f.node1), nodeID(t, f.node2)
			var mu sync.Mutex
			var reports []string
			e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: nodeTarget(t, env, order.urls...),
				Options: core.Options{BatchSize: 50, Progress: func(p core.Progress) {
					mu.Lock()
					reports = append(reports, p.Note) // which node the relay reached is a passing event, not a wait
					mu.Unlock()
				}}}}

			findings, err := e.Preflight(ctx, f.spec(), true)
			if err != nil {
				t.Fatal(err)
			}
			warned := findingsWith(findings, "An AMQP URL reaches another node than management_url")
			if preflight.HasErrors(findings) || len(warned) != 1 || warned[0].Attribute != "target.broker" ||
				!strings.Contains(warned[0].Detail, n1.AMQPURL+": node "+node1ID+", the management node") ||
				!strings.Contains(warned[0].Detail, n2.AMQPURL+": node "+node2ID+", another node (skipped)") {
				t.Fatalf("want one warning on target.broker naming both URLs and nodes, and no refusal; got %+v", findings)
			}

			res, err := e.Move(ctx, f.spec())
			if err != nil {
				t.Fatal(err)
			}
			if res.Relayed != 300 {
				t.Errorf("result %+v", res)
			}
			if d := transfertest.QueueDepth(t, ctx, f.node2, f.tgt); d != 0 {
				t.Fatalf("node2 holds %d messages", d)
			}
			transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.node1, artemis.FQQN(f.tgt, f.tgt)))
			checkNoStaging(t, ctx, f.srcAdmin, res.RunID)
			mu.Lock()
			defer mu.Unlock()
			said := false
			for _, r := range reports {
				said = said || strings.Contains(r, "target target at "+n1.AMQPURL+" (node "+node1ID+")")
			}
			if !said {
				t.Errorf("no progress report names the target URL and node the relay reached: %q", reports)
			}
		})
	}
}

// TestMove_NeverSendsToAnotherNodeWhenTheTargetURLFailsOver: the target's one AMQP URL reaches
// node1 at plan and for the first messages, then reaches node2 (forced past the plan's check).
// The relay waits for node1 instead of sending to node2, stops with ErrInterrupted at the end
// of the retry budget with nothing lost, and once the URL reaches node1 again a resume puts
// every message on node1 exactly once.
func TestMove_NeverSendsToAnotherNodeWhenTheTargetURLFailsOver(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 4*time.Minute)
	n1, n2 := env.Broker(t, "node1"), env.Broker(t, "node2")
	f := newNodeFixture(t, env, "nodes.failover", 500)
	node1ID, node2ID := nodeID(t, f.node1), nodeID(t, f.node2)
	proxy := testenv.NewProxy(t, strings.TrimPrefix(n1.AMQPURL, "amqp://"))
	proxyURL := "amqp://" + proxy.Addr()

	var confirmed atomic.Int64
	var mu sync.Mutex
	var waits []string
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: nodeTarget(t, env, proxyURL),
		Options: core.Options{BatchSize: 50, RetryBudget: 6 * time.Second, Progress: func(p core.Progress) {
			mu.Lock()
			waits = append(waits, p.Waiting)
			mu.Unlock()
		}},
		Hooks: core.Hooks{AfterConfirm: func() {
			if confirmed.Add(1) == 100 {
				proxy.Redirect(strings.TrimPrefix(n2.AMQPURL, "amqp://")) // the URL now reaches node2
			}
		}}}}
	res, err := e.Move(ctx, f.spec())
	if !errors.Is(err, core.ErrInterrupted) || !errors.Is(err, artemis.ErrWrongNode) {
		t.Fatalf("Move: %v; want ErrInterrupted for a wrong node", err)
	}
	if !strings.Contains(err.Error(), proxyURL+" reaches node "+node2ID) || !strings.Contains(err.Error(), "not node "+node1ID) {
		t.Errorf("error does not name the URL, the node it reaches and the run's node: %v", err)
	}
	t.Logf("stopped with: %v", err)
	mu.Lock()
	waited := false
	for _, w := range waits {
		if strings.HasPrefix(w, "waiting: ") && strings.Contains(w, "reaches node "+node2ID) && strings.Contains(w, "not node "+node1ID) {
			if !waited {
				t.Logf("progress: %s", w)
			}
			waited = true
		}
	}
	mu.Unlock()
	if !waited {
		t.Errorf("no progress report said the relay waits for node %s: %q", node1ID, waits)
	}

	onNode2 := transfertest.QueueDepth(t, ctx, f.node2, f.tgt)
	source, staged, onNode1 := transfertest.QueueDepth(t, ctx, f.srcAdmin, f.src), transfertest.QueueDepth(t, ctx, f.srcAdmin, StagingQueue(res.RunID)), transfertest.QueueDepth(t, ctx, f.node1, f.tgt)
	t.Logf("stopped: source %d, staging %d, node1 %d, node2 %d", source, staged, onNode1, onNode2)
	if onNode2 != 0 {
		t.Fatalf("node2 holds %d messages", onNode2)
	}
	// Messages of the batch in flight at the switch may be on node1 and still staged; the resume
	// resends them under their duplicate ids, so node1 ends with each once.
	if source+staged < 500-onNode1 || onNode1 < 100 {
		t.Fatalf("lost messages: source %d + staging %d + node1 %d < 500 (or fewer than the 100 confirmed on node1)", source, staged, onNode1)
	}

	proxy.Redirect(strings.TrimPrefix(n1.AMQPURL, "amqp://")) // node1 is back behind the URL
	e.setup.Hooks = core.Hooks{}
	resumed, err := e.Move(ctx, f.spec())
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if resumed.RunID != res.RunID || !resumed.Resumed {
		t.Errorf("resume result %+v", resumed)
	}
	if d := transfertest.QueueDepth(t, ctx, f.node2, f.tgt); d != 0 {
		t.Fatalf("node2 holds %d messages after the resume", d)
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.node1, artemis.FQQN(f.tgt, f.tgt)))
	checkNoStaging(t, ctx, f.srcAdmin, res.RunID)
}
