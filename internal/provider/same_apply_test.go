package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// sameApplyConfig is a target queue (and, when settings is not empty, its address settings)
// declared by artemis_queue and a transfer of the fixture's source into it, in one
// configuration: the transfer refers to the queue, so Terraform plans and creates it first.
func (f *transferFixture) sameApplyConfig(settings string) string {
	dependsOn := "[artemis_queue.target]"
	if settings != "" {
		settings = fmt.Sprintf(`
resource "artemis_address_settings" "target" {
  broker = "target"
  match  = %q
%s
}
`, f.tgt, settings)
		dependsOn = "[artemis_queue.target, artemis_address_settings.target]"
	}
	return testAccAdminProviderBlock(f.env, "source", "target") + settings + fmt.Sprintf(`
resource "artemis_queue" "target" {
  broker       = "target"
  name         = %q
  address      = %q
  routing_type = "ANYCAST"
}

resource "artemis_queue_transfer" "t" {
  source     = { broker = "source", queue = %q }
  target     = { broker = "target", queue = artemis_queue.target.name }
  depends_on = %s
}
`, f.tgt, f.tgt, f.src, dependsOn)
}

// dropTargetQueue removes the fixture's target queue, so that the configuration creates it.
func (f *transferFixture) dropTargetQueue(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.tgtAdmin.DestroyQueue(ctx, f.tgt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = f.tgtAdmin.DestroyQueue(ctx, f.tgt)
		_ = f.tgtAdmin.RemoveAddressSettings(ctx, f.tgt)
	})
}

// A whole-broker migration declares the target's queues and moves into them in one apply: the
// plan knows the transfer's target is created by the same apply (instead of refusing a queue
// that does not exist yet), and the apply moves every message exactly once into it.
func TestAccQueueTransfer_IntoAQueueCreatedInTheSameApply(t *testing.T) {
	f := newTransferFixture(t, 200)
	f.dropTargetQueue(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: f.sameApplyConfig(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("artemis_queue.target", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("artemis_queue_transfer.t", plancheck.ResourceActionCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("artemis_queue_transfer.t", "status", "completed"),
					resource.TestCheckResourceAttr("artemis_queue_transfer.t", "messages_relayed", "200"),
					f.checkDepths(0, 200), f.checkNoRuns(), f.checkTargetHoldsExactly(f.ids)),
			},
			{
				// A second plan of the same configuration changes nothing.
				Config:   f.sameApplyConfig(""),
				PlanOnly: true,
			},
		},
	})
}

// The target's rules run at apply against the queue and settings the same apply created,
// before anything moves: settings that drop messages when the address is full refuse the
// transfer there, and the source keeps every message.
func TestAccQueueTransfer_IntoAQueueCreatedInTheSameApplyIsCheckedBeforeAnythingMoves(t *testing.T) {
	const dropSettings = "  address_full_policy = \"DROP\"\n  max_size_bytes      = 10485760"
	f := newTransferFixture(t, 50)
	f.dropTargetQueue(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      f.sameApplyConfig(dropSettings),
				ExpectError: regexp.MustCompile(`(?s)Target drops messages when full`),
			},
			{
				// Nothing moved: the source holds every message, the created target none.
				Config: strings.Split(f.sameApplyConfig(dropSettings), `resource "artemis_queue_transfer"`)[0],
				Check:  resource.ComposeAggregateTestCheckFunc(f.checkDepths(50, 0), f.checkNoRuns()),
			},
		},
	})
}
