package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/move"
)

// transferFixture is a source and a target queue for one acceptance test.
type transferFixture struct {
	env                *testenv.Env
	srcAdmin, tgtAdmin *artemis.Client
	src, tgt           string
	ids                []string
}

func newTransferFixture(t *testing.T, messages int) *transferFixture {
	t.Helper()
	env := testenv.Require(t)
	f := &transferFixture{env: env, srcAdmin: testAccAdminClient(t, env, "source"), tgtAdmin: testAccAdminClient(t, env, "target"),
		src: testenv.UniqueName("acc.transfer.src"), tgt: testenv.UniqueName("acc.transfer.tgt")}
	testAccQueue(t, env, "source", artemis.QueueSpec{Name: f.src, Durable: true, RingSize: -1, MaxConsumers: -1})
	testAccQueue(t, env, "target", artemis.QueueSpec{Name: f.tgt, Durable: true, RingSize: -1, MaxConsumers: -1})
	if messages > 0 {
		f.ids = testAccProduce(t, f.srcAdmin, f.src, messages)
	}
	t.Cleanup(func() { f.removeRuns(t) })
	return f
}

// removeRuns deletes whatever runs of this fixture's source queue left behind.
func (f *transferFixture) removeRuns(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runs, err := (&transfer.Engine{Source: f.srcAdmin}).Orphans(ctx)
	if err != nil {
		return
	}
	for _, r := range runs {
		if r.SourceQueue == f.src {
			for _, q := range []string{transfer.StagingQueue(r.RunID), transfer.ManifestQueue(r.RunID), move.QuarantineQueue(r.RunID)} {
				_ = f.srcAdmin.DestroyQueue(ctx, q)
			}
			_ = f.srcAdmin.RemoveAddressSettings(ctx, transfer.StagingQueue(r.RunID))
			_ = f.srcAdmin.RemoveAddressSettings(ctx, move.QuarantineQueue(r.RunID))
		}
	}
}

// config is a provider block and a transfer of this fixture, with extra attributes.
func (f *transferFixture) config(extra string) string {
	return testAccProviderBlock(f.env, "source", "target") + fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
%s
}
`, f.src, f.tgt, extra)
}

// importStep imports this fixture's run runID into the transfer's state, checked by check when
// it is not nil.
func (f *transferFixture) importStep(runID string, check resource.ImportStateCheckFunc) resource.TestStep {
	return resource.TestStep{
		Config:             f.config(""),
		ResourceName:       "artemis_queue_transfer.t",
		ImportState:        true,
		ImportStateId:      "source/" + runID,
		ImportStatePersist: true,
		ImportStateCheck:   check,
	}
}

func (f *transferFixture) depth(t *testing.T, c *artemis.Client, queue string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		t.Fatal(err)
	}
	return q.MessageCount
}

// checkTargetHoldsExactly consumes the target and compares its message ids with want.
func (f *transferFixture) checkTargetHoldsExactly(want []string) resource.TestCheckFunc {
	return checkQueueHoldsExactly(f.tgtAdmin, f.tgt, want)
}

//nolint:unparam // both depths are named at each call, so a check reads as the state it expects
func (f *transferFixture) checkDepths(src, tgt int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := f.srcAdmin.Queue(ctx, f.src)
		if err != nil {
			return err
		}
		d, err := f.tgtAdmin.Queue(ctx, f.tgt)
		if err != nil {
			return err
		}
		if s.MessageCount != src || d.MessageCount != tgt {
			return fmt.Errorf("source holds %d and target %d, want %d and %d", s.MessageCount, d.MessageCount, src, tgt)
		}
		return nil
	}
}

func (f *transferFixture) checkNoRuns() resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		runs, err := (&transfer.Engine{Source: f.srcAdmin}).Orphans(ctx)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.SourceQueue == f.src {
				return fmt.Errorf("run %s is still staged", r.RunID)
			}
		}
		return nil
	}
}

// testAccProduce sends n durable messages with distinct message ids.
func testAccProduce(t *testing.T, c *artemis.Client, queue string, n int) []string {
	t.Helper()
	return testAccProduceWith(t, c, queue, n, nil)
}

// testAccProduceWith sends n durable messages with distinct message ids; message i carries the
// application properties props(i) when props is not nil.
func testAccProduceWith(t *testing.T, c *artemis.Client, queue string, n int, props func(i int) map[string]any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids := make([]string, n)
	transfertest.Produce(t, ctx, c, queue, n, func(i int) *amqp.Message {
		ids[i] = fmt.Sprintf("%s-%d", queue, i)
		now := time.Now()
		msg := &amqp.Message{Header: &amqp.MessageHeader{Durable: true},
			Properties: &amqp.MessageProperties{MessageID: ids[i], CreationTime: &now}, Data: [][]byte{make([]byte, 256)}}
		if props != nil {
			msg.ApplicationProperties = props(i)
		}
		return msg
	})
	return ids
}

// testAccConsumeIDs consumes a queue and returns the message ids it held. It takes as many
// messages as the broker counts on the queue, each within a bound, rather than stopping at the
// first pause of a few seconds, which a busy machine could take for the end of the queue. The
// queue must hold still (callers run after the transfer ended). Errors show as missing ids.
func testAccConsumeIDs(c *artemis.Client, queue string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		return nil
	}
	conn, err := c.Connect(ctx)
	if err != nil {
		return nil
	}
	defer conn.Close()
	// The queue's own address: a subscription queue's is not its name.
	r, err := conn.NewReceiver(ctx, q.FQQN(), artemis.ReceiverOptions{Credit: 1000})
	if err != nil {
		return nil
	}
	var ids []string
	for i := int64(0); i < q.MessageCount; i++ {
		wait, cancelWait := context.WithTimeout(ctx, 30*time.Second)
		msg, err := r.Receive(wait)
		cancelWait()
		if err != nil {
			break
		}
		_ = r.Accept(ctx, msg)
		ids = append(ids, fmt.Sprint(msg.Properties.MessageID))
	}
	return ids
}

func TestAccQueueTransfer_MovesAQueueThroughPlanAndApply(t *testing.T) {
	f := newTransferFixture(t, 5000)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: f.config(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("status"), knownvalue.StringExact("completed")),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(5000)),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_remaining"), knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("run_id"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{12}-[0-9a-z]+$`))),
				},
				Check: resource.ComposeAggregateTestCheckFunc(f.checkDepths(0, 5000), f.checkNoRuns()),
			},
			// A second plan is empty: a completed transfer is never run again.
			{Config: f.config(""), PlanOnly: true},
			// A harmless edit of the tuning is recorded in place, without moving anything.
			{Config: f.config("  batch_size = 200"), Check: f.checkTargetHoldsExactly(f.ids)},
		},
	})
}

// Each refusal is a plan error on the attribute at fault, with nothing moved.
func TestAccQueueTransfer_PlanRefusesTransfersThatWouldLoseMessages(t *testing.T) {
	f := newTransferFixture(t, 10)
	dropTarget := testenv.UniqueName("acc.transfer.drop")
	testAccQueue(t, f.env, "target", artemis.QueueSpec{Name: dropTarget, Durable: true, RingSize: -1, MaxConsumers: -1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.tgtAdmin.AddAddressSettings(ctx, dropTarget, map[string]any{"addressFullMessagePolicy": "DROP"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.tgtAdmin.RemoveAddressSettings(context.Background(), dropTarget) })
	filtered := testenv.UniqueName("acc.transfer.filtered")
	testAccQueue(t, f.env, "target", artemis.QueueSpec{Name: filtered, Durable: true, RingSize: -1, MaxConsumers: -1, Filter: "x = 1"})
	ring := testenv.UniqueName("acc.transfer.ring")
	testAccQueue(t, f.env, "target", artemis.QueueSpec{Name: ring, Durable: true, RingSize: 5, MaxConsumers: -1})
	lastValue := testenv.UniqueName("acc.transfer.lvq")
	testAccQueue(t, f.env, "target", artemis.QueueSpec{Name: lastValue, Durable: true, RingSize: -1, MaxConsumers: -1, LastValue: true})
	purge := testenv.UniqueName("acc.transfer.purge")
	testAccQueue(t, f.env, "target", artemis.QueueSpec{Name: purge, Durable: true, RingSize: -1, MaxConsumers: -1, PurgeOnNoConsumers: true})
	noCache := testenv.UniqueName("acc.transfer.nocache")
	testAccQueue(t, f.env, "target", artemis.QueueSpec{Name: noCache, Durable: true, RingSize: -1, MaxConsumers: -1})
	smallCache := testenv.UniqueName("acc.transfer.smallcache")
	testAccQueue(t, f.env, "target", artemis.QueueSpec{Name: smallCache, Durable: true, RingSize: -1, MaxConsumers: -1})
	pageDrop := testenv.UniqueName("acc.transfer.pagedrop")
	testAccQueue(t, f.env, "target", artemis.QueueSpec{Name: pageDrop, Durable: true, RingSize: -1, MaxConsumers: -1})
	for match, settings := range map[string]map[string]any{
		noCache:    {"idCacheSize": 0},
		smallCache: {"idCacheSize": 600},
		pageDrop:   {"addressFullMessagePolicy": "PAGE", "pageLimitMessages": int64(100), "pageFullMessagePolicy": "DROP"},
	} {
		if err := f.tgtAdmin.AddAddressSettings(ctx, match, settings); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.tgtAdmin.RemoveAddressSettings(context.Background(), match) })
	}
	// The provider as a user who may only read, and with a target acceptor that ignores
	// duplicate ids.
	tb := f.env.Broker(t, "target")
	asViewer := strings.ReplaceAll(strings.ReplaceAll(testAccProviderBlock(f.env, "source", "target"),
		fmt.Sprintf("%q", f.env.TransferUser), fmt.Sprintf("%q", f.env.ViewerUser)),
		fmt.Sprintf("%q", f.env.TransferPassword), fmt.Sprintf("%q", f.env.ViewerPassword))
	noDedup := strings.Replace(testAccProviderBlock(f.env, "source", "target"), fmt.Sprintf("[%q, %q]", tb.AMQPURL, tb.AMQPSURL),
		fmt.Sprintf("[%q]", tb.AMQPNoDedupURL), 1)
	resourceTo := func(target string) string {
		return fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}
`, f.src, target)
	}

	transferTo := func(target, extra string) string {
		return testAccProviderBlock(f.env, "source", "target") + fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
%s
}
`, f.src, target, extra)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: transferTo(dropTarget, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)target\.queue.*DROP`)},
			{Config: transferTo(filtered, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)target\.queue.*filter`)},
			{Config: transferTo("no.such.queue", ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)target\.queue.*no\.such\.queue`)},
			{Config: transferTo(f.tgt, `  filter = "color = = 'x'"`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)with artemis_queue_transfer\.t,.*filter`)},
			{Config: transferTo(f.tgt, `  message_ids = ["a"]
  filter = "x = 1"`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)message_ids`)},
			{Config: strings.Replace(transferTo(f.src, ""), `target = { broker = "target"`, `target = { broker = "source"`, 1),
				PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)same queue`)},
			{Config: strings.Replace(transferTo(f.tgt, ""), `broker = "target"`, `broker = "dc9"`, 1),
				PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)no broker named "dc9".*Set\s+target\.broker`)},
			{Config: transferTo(ring, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)target\.queue.*ring`)},
			{Config: transferTo(lastValue, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)target\.queue.*last-value`)},
			{Config: transferTo(purge, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)target\.queue.*consumers`)},
			{Config: transferTo(noCache, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?si)target\.queue.*duplicate`)},
			{Config: transferTo(pageDrop, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)target\.queue.*DROP`)},
			{Config: transferTo(smallCache, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)batch_size.*duplicate`)},
			// What only a write proves, the plan proves when opted in (a default plan leaves it to apply).
			{Config: withPlanSendsCanaries(noDedup) + resourceTo(f.tgt), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)target\.broker.*stored\s+twice`)},
			{Config: withPlanSendsCanaries(asViewer) + resourceTo(f.tgt), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)"viewer"`)},
		},
	})
	if d := f.depth(t, f.srcAdmin, f.src); d != 10 {
		t.Errorf("the source holds %d of 10 after refused plans", d)
	}
	if err := f.checkNoRuns()(nil); err != nil {
		t.Error(err)
	}
}

// An apply that is interrupted stops at a batch boundary, reports how to continue and leaves no
// state (so nothing is tainted); the next apply resumes the same run. The first apply is stopped
// at a precise point of its run (runStopper), as a timeout or Ctrl-C would stop it, but at the
// same point on any machine: a short `timeouts` value let a fast machine finish first.
func TestAccQueueTransfer_InterruptedApplyIsResumedByTheNextApply(t *testing.T) {
	f := newTransferFixture(t, 30000)
	stopper := newRunStopper(100) // batch_size 500 (default): at most 2 batches, 1,000 of the first chunk of 2,000, relayed
	var runID string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccFactoriesWithRunHooks(stopper.hooks),
		Steps: []resource.TestStep{
			{
				Config: f.config(""),
				// The error ends with the one sentence that says what to do: apply again, which resumes the run.
				ExpectError: regexp.MustCompile(`(?s)Transfer interrupted; no message was lost.*Next:\s+run\s+terraform\s+apply\s+again,\s+which\s+resumes\s+run\s+[0-9a-f]{12}-[0-9a-z]+\s+where\s+it\s+stopped`),
			},
			{
				PreConfig: func() {
					if !stopper.stopped() {
						t.Fatal("the first apply was not stopped after 100 confirmations")
					}
					// Half done: exactly the first staging chunk left the source.
					if d := f.depth(t, f.srcAdmin, f.src); d != int64(30000-defaultStagingChunkSize) {
						t.Fatalf("after the interrupted apply the source holds %d, want %d", d, 30000-defaultStagingChunkSize)
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					runs, err := (&transfer.Engine{Source: f.srcAdmin}).Orphans(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range runs {
						if r.SourceQueue == f.src {
							runID = r.RunID
						}
					}
					if runID == "" {
						t.Fatal("the interrupted apply left no run to resume")
					}
				},
				Config: f.config(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(30000)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						if got := s.RootModule().Resources["artemis_queue_transfer.t"].Primary.Attributes["run_id"]; got != runID {
							return fmt.Errorf("the second apply ran %s, not the interrupted run %s", got, runID)
						}
						return nil
					},
					f.checkNoRuns(),
					f.checkTargetHoldsExactly(f.ids),
				),
			},
		},
	})
}

// startInterruptedRun starts a run outside Terraform and stops it midway, as an apply that died
// would: at a precise point (runStopper), so that it is half done on any machine. Exactly one
// staging chunk has left the source; the relay confirmed at least 1,000 of it and settled what it
// had in flight; the rest of the chunk is staged.
func startInterruptedRun(t *testing.T, f *transferFixture) string {
	t.Helper()
	c := func(name string) *artemis.Client {
		b := f.env.Broker(t, name)
		cl, err := artemis.New(artemis.Config{Name: name, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
			Username: f.env.TransferUser, Password: f.env.TransferPassword})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	const chunk, batch, confirms = 2000, 100, 1000
	if len(f.ids) <= chunk {
		t.Fatalf("startInterruptedRun needs more than one staging chunk (%d) of messages, the fixture has %d", chunk, len(f.ids))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a bound, not the stop
	defer cancel()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	stopper := newRunStopper(confirms)
	e := &transfer.Engine{Source: c("source"), Target: c("target"), Options: transfer.Options{BatchSize: batch, ChunkSize: chunk},
		Hooks: stopper.hooks(stopRun)}
	res, err := e.Run(runCtx, transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "source", Queue: f.src},
		Target: transfer.Endpoint{Broker: "target", Queue: f.tgt}})
	if !errors.Is(err, transfer.ErrInterrupted) || !stopper.stopped() {
		t.Fatalf("want a run stopped after %d confirmations, got %+v, %v", confirms, res, err)
	}
	// At most the two batches in flight are settled after the stop.
	if res.Relayed < confirms || res.Relayed > confirms+2*batch {
		t.Fatalf("the stopped run relayed %d, want %d to %d", res.Relayed, confirms, confirms+2*batch)
	}
	if d := f.depth(t, f.srcAdmin, f.src); d != int64(len(f.ids)-chunk) {
		t.Fatalf("the stopped run left %d on the source, want all but its one chunk: %d", d, len(f.ids)-chunk)
	}
	// The broker applies the relay's last acknowledgements after Accept returned (settle mode
	// first), so staging reaches what was not relayed a moment later; bounded wait.
	want := int64(chunk) - res.Relayed
	staged := int64(-1)
	for deadline := time.Now().Add(30 * time.Second); staged != want && time.Now().Before(deadline); {
		if staged = f.depth(t, f.srcAdmin, transfer.StagingQueue(res.RunID)); staged != want {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if staged != want {
		t.Fatalf("staging holds %d, want the %d of the chunk not relayed", staged, want)
	}
	return res.RunID
}

func TestAccQueueTransfer_ImportAnUnfinishedRunThenApplyCompletesIt(t *testing.T) {
	f := newTransferFixture(t, 20000)
	runID := startInterruptedRun(t, f)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			f.importStep(runID, func(states []*terraform.InstanceState) error {
				if len(states) != 1 || states[0].Attributes["status"] != "unfinished" || states[0].Attributes["source.queue"] != f.src ||
					states[0].Attributes["target.queue"] != f.tgt {
					return fmt.Errorf("imported %+v", states)
				}
				return nil
			}),
			{
				Config: f.config(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("status"), knownvalue.StringExact("completed")),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("run_id"), knownvalue.StringExact(runID)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(f.checkNoRuns(), f.checkTargetHoldsExactly(f.ids)),
			},
		},
	})
}

func TestAccQueueTransfer_DestroyOfAnImportedUnfinishedRunReturnsItsMessages(t *testing.T) {
	f := newTransferFixture(t, 20000)
	runID := startInterruptedRun(t, f)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if err := f.checkNoRuns()(nil); err != nil {
				return err
			}
			onTarget := testAccConsumeIDs(f.tgtAdmin, f.tgt)
			onSource := testAccConsumeIDs(f.srcAdmin, f.src)
			all := append(onTarget, onSource...)
			sort.Strings(all)
			want := append([]string(nil), f.ids...)
			sort.Strings(want)
			if strings.Join(all, ",") != strings.Join(want, ",") {
				return fmt.Errorf("after destroy: %d on the target and %d back on the source, want %d in all, each once",
					len(onTarget), len(onSource), len(want))
			}
			return nil
		},
		Steps: []resource.TestStep{
			f.importStep(runID, nil),
		},
	})
}
