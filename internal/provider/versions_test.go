package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// The tests here pair the environment's newest broker (source or target, Artemis 2.40) with its
// legacy broker, whose version scripts/testenv.sh takes from TESTENV_LEGACY_VERSION (2.31.2 by
// default). make test-versions runs them with the oldest supported version and with 2.31.2.

// versionDirections are the two ways a transfer crosses versions: from the legacy broker to the
// newest one, and back.
var versionDirections = []struct{ name, source, target string }{
	{name: "legacy_to_newest", source: "legacy", target: "target"},
	{name: "newest_to_legacy", source: "source", target: "legacy"},
}

// newVersionFixture is a source queue with messages on one broker and an empty target queue on
// another; each message has an int property parity, 0 or 1, for a filter to select.
func newVersionFixture(t *testing.T, env *testenv.Env, source, target, prefix string, messages int) *transferFixture {
	t.Helper()
	f := &transferFixture{env: env, srcAdmin: testAccAdminClient(t, env, source), tgtAdmin: testAccAdminClient(t, env, target),
		src: testenv.UniqueName(prefix + ".src"), tgt: testenv.UniqueName(prefix + ".tgt")}
	testAccQueue(t, env, source, artemis.QueueSpec{Name: f.src, Durable: true, RingSize: -1, MaxConsumers: -1})
	testAccQueue(t, env, target, artemis.QueueSpec{Name: f.tgt, Durable: true, RingSize: -1, MaxConsumers: -1})
	f.ids = produceWithParity(t, f.srcAdmin, f.src, messages)
	t.Cleanup(func() { f.removeRuns(t) })
	return f
}

// produceWithParity sends n durable messages with distinct ids; message i has parity i%2.
func produceWithParity(t *testing.T, c *artemis.Client, queue string, n int) []string {
	t.Helper()
	return testAccProduceWith(t, c, queue, n, func(i int) map[string]any { return map[string]any{"parity": int32(i % 2)} })
}

// byParity splits ids made by produceWithParity into the even and the odd ones.
func byParity(ids []string) (even, odd []string) {
	for i, id := range ids {
		if i%2 == 0 {
			even = append(even, id)
		} else {
			odd = append(odd, id)
		}
	}
	return even, odd
}

// A move with a filter and a copy of a whole queue, in one plan and apply, each way between the
// legacy broker and the newest one: the move puts exactly the selected messages on the target
// and leaves exactly the others on the source; the copy puts every message on the target and
// leaves the source as it was.
func TestAccVersions_MoveAndCopyBetweenTheLegacyAndTheNewestBroker(t *testing.T) {
	env := testenv.Require(t)
	for _, d := range versionDirections {
		t.Run(d.name, func(t *testing.T) {
			moved := newVersionFixture(t, env, d.source, d.target, "acc.versions.move", 300)
			copied := newVersionFixture(t, env, d.source, d.target, "acc.versions.copy", 200)
			selected, kept := byParity(moved.ids)
			config := withLedger(testAccProviderBlock(env, d.source, d.target), testAccLedgerDSN(t, env)) + fmt.Sprintf(`
resource "artemis_queue_transfer" "move" {
  source = { broker = %q, queue = %q }
  target = { broker = %q, queue = %q }
  filter = "parity = 0"
}

resource "artemis_queue_transfer" "copy" {
  mode   = "copy"
  source = { broker = %q, queue = %q }
  target = { broker = %q, queue = %q }
}
`, d.source, moved.src, d.target, moved.tgt, d.source, copied.src, d.target, copied.tgt)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: config,
					Check: resource.ComposeAggregateTestCheckFunc(
						resource.TestCheckResourceAttr("artemis_queue_transfer.move", "status", "completed"),
						resource.TestCheckResourceAttr("artemis_queue_transfer.move", "messages_relayed", fmt.Sprint(len(selected))),
						resource.TestCheckResourceAttr("artemis_queue_transfer.copy", "status", "completed"),
						resource.TestCheckResourceAttr("artemis_queue_transfer.copy", "messages_relayed", fmt.Sprint(len(copied.ids))),
						moved.checkNoRuns(),
						moved.checkTargetHoldsExactly(selected),
						checkQueueHoldsExactly(moved.srcAdmin, moved.src, kept),
						copied.checkTargetHoldsExactly(copied.ids),
						checkQueueHoldsExactly(copied.srcAdmin, copied.src, copied.ids),
					),
				}},
			})
		})
	}
}

// The refusals that read the target's address settings hold on the legacy broker too, whose
// management API reports them in an older form: a target address that drops messages when full
// is refused at plan, for a move and for a copy, and nothing is transferred.
func TestAccVersions_PlanRefusesATargetThatDropsOnTheLegacyBroker(t *testing.T) {
	env := testenv.Require(t)
	f := newVersionFixture(t, env, "source", "legacy", "acc.versions.drop", 10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.tgtAdmin.AddAddressSettings(ctx, f.tgt, map[string]any{"addressFullMessagePolicy": "DROP"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = f.tgtAdmin.RemoveAddressSettings(ctx, f.tgt)
	})
	for _, mode := range []string{"move", "copy"} {
		t.Run(mode, func(t *testing.T) {
			config := withLedger(testAccProviderBlock(env, "source", "legacy"), testAccLedgerDSN(t, env)) + fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  mode   = %q
  source = { broker = "source", queue = %q }
  target = { broker = "legacy", queue = %q }
}
`, mode, f.src, f.tgt)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:             config,
					PlanOnly:           true,
					ExpectNonEmptyPlan: true,
					ExpectError:        errorRe("Target drops messages when full", f.tgt, `"legacy"`, "address-full-policy DROP"),
				}},
			})
		})
	}
	if src, tgt := f.depth(t, f.srcAdmin, f.src), f.depth(t, f.tgtAdmin, f.tgt); src != 10 || tgt != 0 {
		t.Fatalf("source holds %d and target %d, want 10 and 0: a refused transfer moves nothing", src, tgt)
	}
}
