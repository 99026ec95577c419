package provider

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccQueueTransfer_ImportedRunIsRefusedAtPlanWhenTheTargetNowDropsMessages: a run is
// interrupted, then its target address is changed to address-full-policy DROP. The plan of the
// imported run must refuse it on target.queue, as for a new transfer, and the apply must move
// nothing more; with the policy back the same run completes exactly.
func TestAccQueueTransfer_ImportedRunIsRefusedAtPlanWhenTheTargetNowDropsMessages(t *testing.T) {
	f := newTransferFixture(t, 3000)
	runID := startInterruptedRun(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.tgtAdmin.AddAddressSettings(ctx, f.tgt, map[string]any{"addressFullMessagePolicy": "DROP", "maxSizeBytes": int64(10 << 20)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.tgtAdmin.RemoveAddressSettings(context.Background(), f.tgt) })
	onTarget := f.depth(t, f.tgtAdmin, f.tgt)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			f.importStep(runID, nil),
			{
				Config:      f.config(""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Target drops messages when full`),
			},
			{
				PreConfig: func() {
					if n := f.depth(t, f.tgtAdmin, f.tgt); n != onTarget {
						t.Errorf("the refused plan moved messages: target %d -> %d", onTarget, n)
					}
					if err := f.tgtAdmin.RemoveAddressSettings(context.Background(), f.tgt); err != nil {
						t.Fatal(err)
					}
				},
				Config: f.config(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("status"), knownvalue.StringExact("completed")),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("run_id"), knownvalue.StringExact(runID)),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(int64(len(f.ids)))),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_resent"), knownvalue.Int64Exact(0)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(f.checkNoRuns(), f.checkTargetHoldsExactly(f.ids)),
			},
		},
	})
}
