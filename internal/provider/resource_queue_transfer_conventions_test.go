package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// Tuning a completed copy is an in-place update that plans every computed value as it is in
// state: the run, its counters and its times do not change, so none is "(known after apply)".
func TestAccQueueTransfer_TuningACompletedCopyPlansNoUnknownValues(t *testing.T) {
	f := newTransferFixture(t, 30)
	dsn := testAccLedgerDSN(t, f.env)
	config := func(extra string) string { return f.copyConfig(dsn, extra) }
	const address = "artemis_queue_transfer.t"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(""), Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(address, "status", "completed"),
				f.checkDepths(30, 30))},
			{
				Config: config("  batch_size = 200"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
					expectNoUnknownValues{address: address},
				}},
				// The edit copied nothing again.
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "batch_size", "200"),
					resource.TestCheckResourceAttr(address, "messages_relayed", "30"),
					f.checkDepths(30, 30)),
			},
		},
	})
}

// Changing triggers replaces a completed move, and the new run moves what arrived on the source
// since the first one: every message once on the target, none left behind.
func TestAccQueueTransfer_ChangingTriggersRunsACompletedMoveAgain(t *testing.T) {
	f := newTransferFixture(t, 40)
	const address = "artemis_queue_transfer.t"
	var firstRunID string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: f.config(`  triggers = { wave = "1" }`),
				Check: resource.ComposeAggregateTestCheckFunc(
					f.checkDepths(0, 40),
					resource.TestCheckResourceAttr(address, "messages_relayed", "40"),
					func(s *terraform.State) error {
						firstRunID = s.RootModule().Resources[address].Primary.Attributes["run_id"]
						return nil
					}),
			},
			{
				PreConfig: func() { testAccProduce(t, f.srcAdmin, f.src, 25) }, // arrived since the first run
				Config:    f.config(`  triggers = { wave = "2" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					f.checkDepths(0, 65),
					resource.TestCheckResourceAttr(address, "messages_relayed", "25"),
					resource.TestCheckResourceAttr(address, "triggers.wave", "2"),
					func(s *terraform.State) error {
						if got := s.RootModule().Resources[address].Primary.Attributes["run_id"]; got == firstRunID || firstRunID == "" {
							return fmt.Errorf("run_id is %q after the trigger changed, want a new run (the first was %q)", got, firstRunID)
						}
						return nil
					}),
			},
		},
	})
}

// Changing triggers replaces a completed copy, and the new run copies the source again: the
// source keeps its messages, and the target gets each of them once more.
func TestAccQueueTransfer_ChangingTriggersCopiesACompletedCopyAgain(t *testing.T) {
	f := newTransferFixture(t, 30)
	dsn := testAccLedgerDSN(t, f.env)
	config := func(wave string) string { return f.copyConfig(dsn, fmt.Sprintf("  triggers = { wave = %q }", wave)) }
	const address = "artemis_queue_transfer.t"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("1"), Check: f.checkDepths(30, 30)},
			{Config: config("1"), PlanOnly: true}, // unchanged triggers: nothing to do
			{
				Config: config("2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "messages_relayed", "30"),
					f.checkDepths(30, 60),
					f.checkTargetHoldsExactly(append(append([]string(nil), f.ids...), f.ids...))),
			},
		},
	})
}
