package provider

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// An interrupted run nobody resumes is reported with its counts and source, and
// artemis_transfer_return puts its messages back, none lost or doubled.
func TestAccOrphanedTransfers_ReportsAnAbandonedRunAndTransferReturnReturnsIt(t *testing.T) {
	f := newTransferFixture(t, 20000)
	runID := startInterruptedRun(t, f)
	staged := f.depth(t, f.srcAdmin, "studio.transfer."+runID)
	listing := testAccProviderBlock(f.env, "source", "target") + `
data "artemis_orphaned_transfers" "o" {
  brokers = ["source"]
}
`
	ret := listing + fmt.Sprintf(`
resource "artemis_transfer_return" "r" {
  broker   = "source"
  run_id   = %q
  timeouts = { create = "10m" }
}
`, runID)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: listing,
				Check: resource.TestCheckTypeSetElemNestedAttrs("data.artemis_orphaned_transfers.o", "transfers.*", map[string]string{
					"run_id": runID, "import_id": "source/" + runID, "broker": "source", "source_queue": f.src,
					"target_broker": "target", "target_queue": f.tgt, "has_manifest": "true",
					"message_count": fmt.Sprint(staged), "quarantined_count": "0",
				}),
			},
			{
				Config: ret,
				Check: resource.ComposeAggregateTestCheckFunc(
					// What was staged goes back, except the messages of the batches in flight when the
					// run stopped: those are settled at the target (relayed), never put on both.
					func(s *terraform.State) error {
						a := s.RootModule().Resources["artemis_transfer_return.r"].Primary.Attributes
						var returned, relayed int64
						if _, err := fmt.Sscan(a["messages_returned"], &returned); err != nil {
							return fmt.Errorf("messages_returned %q: %w", a["messages_returned"], err)
						}
						if _, err := fmt.Sscan(a["messages_relayed"], &relayed); err != nil {
							return fmt.Errorf("messages_relayed %q: %w", a["messages_relayed"], err)
						}
						if returned+relayed != staged {
							return fmt.Errorf("%d returned and %d relayed, want the %d staged", returned, relayed, staged)
						}
						return nil
					},
					resource.TestCheckResourceAttr("artemis_transfer_return.r", "source_queue", f.src),
					f.checkNoRuns(),
					func(*terraform.State) error {
						onTarget := testAccConsumeIDs(f.tgtAdmin, f.tgt)
						onSource := testAccConsumeIDs(f.srcAdmin, f.src)
						// The run may have stopped while staging, leaving some messages never staged.
						if len(onSource)+len(onTarget) != len(f.ids) || int64(len(onSource)) < staged {
							return fmt.Errorf("%d on the source (%d were staged) and %d on the target, of %d", len(onSource), staged, len(onTarget), len(f.ids))
						}
						all := append(onTarget, onSource...)
						sort.Strings(all)
						want := append([]string(nil), f.ids...)
						sort.Strings(want)
						if strings.Join(all, ",") != strings.Join(want, ",") {
							return fmt.Errorf("%d on the target and %d on the source, want %d in all, each once", len(onTarget), len(onSource), len(want))
						}
						return nil
					},
				),
			},
			// Once returned, the run is no longer listed.
			{
				Config: ret,
				Check: func(s *terraform.State) error {
					rs := s.RootModule().Resources["data.artemis_orphaned_transfers.o"]
					for k, v := range rs.Primary.Attributes {
						if strings.HasSuffix(k, ".run_id") && v == runID {
							return fmt.Errorf("run %s is still listed after its return", runID)
						}
					}
					return nil
				},
			},
			// A longer timeout is an in-place update that keeps the record of the return.
			{
				Config: strings.Replace(ret, `create = "10m"`, `create = "20m"`, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("artemis_transfer_return.r", plancheck.ResourceActionUpdate),
					expectNoUnknownValues{address: "artemis_transfer_return.r"},
				}},
				Check: resource.TestCheckResourceAttr("artemis_transfer_return.r", "source_queue", f.src),
			},
		},
	})
}
