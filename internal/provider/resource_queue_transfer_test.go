package provider

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

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
