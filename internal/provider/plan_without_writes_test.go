package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// TestAccQueueTransfer_ReviewerPlansWithoutWritesAndApplyStillChecks: a reviewer whose broker
// user may only read and browse plans with plan_without_writes: the plan passes (the checks that
// need writes are left to apply). The same user without it is refused at plan for lack of write
// permissions, and an apply with that user is refused with nothing moved; the operator's apply
// then moves every message.
func TestAccQueueTransfer_ReviewerPlansWithoutWritesAndApplyStillChecks(t *testing.T) {
	f := newTransferFixture(t, 50)
	asViewer := strings.ReplaceAll(strings.ReplaceAll(testAccProviderBlock(f.env, "source", "target"),
		fmt.Sprintf("%q", f.env.TransferUser), fmt.Sprintf("%q", f.env.ViewerUser)),
		fmt.Sprintf("%q", f.env.TransferPassword), fmt.Sprintf("%q", f.env.ViewerPassword))
	withoutWrites := strings.Replace(asViewer, "provider \"artemis\" {\n", "provider \"artemis\" {\n  plan_without_writes = true\n", 1)
	transfer := fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}
`, f.src, f.tgt)
	nothingMoved := func() {
		if n := f.depth(t, f.srcAdmin, f.src); n != int64(len(f.ids)) {
			t.Errorf("the source holds %d messages, want all %d", n, len(f.ids))
		}
		if n := f.depth(t, f.tgtAdmin, f.tgt); n != 0 {
			t.Errorf("the target holds %d messages, want none", n)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			// The reviewer's plan: no error, a change to review.
			{Config: withoutWrites + transfer, PlanOnly: true, ExpectNonEmptyPlan: true},
			// The same user with every check: refused for what it may not do.
			{Config: asViewer + transfer, PlanOnly: true, ExpectError: regexp.MustCompile(`The broker user lacks a permission`)},
			// Apply with the reviewer's user makes the write checks, and refuses.
			{PreConfig: nothingMoved, Config: withoutWrites + transfer, ExpectError: regexp.MustCompile(`The broker user lacks a permission`)},
			// The operator's apply moves everything.
			{
				PreConfig: nothingMoved,
				Config:    f.config(""),
				Check: resource.ComposeAggregateTestCheckFunc(f.checkNoRuns(), f.checkTargetHoldsExactly(f.ids),
					func(*terraform.State) error { return nil }),
			},
		},
	})
}
