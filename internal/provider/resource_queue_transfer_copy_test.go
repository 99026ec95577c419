package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// A copy without a ledger is refused at plan, naming ledger_dsn, and copies nothing.
func TestAccQueueTransfer_CopyWithoutALedgerIsRefusedAtPlanOnLedgerDSN(t *testing.T) {
	f := newTransferFixture(t, 20)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             f.config(`  mode = "copy"`),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ExpectError:        errorRe(copyNeedsLedgerSummary, "Set ledger_dsn", "Nothing was copied"),
		}},
	})
	if src, tgt := f.depth(t, f.srcAdmin, f.src), f.depth(t, f.tgtAdmin, f.tgt); src != 20 || tgt != 0 {
		t.Fatalf("source holds %d and target %d, want 20 and 0: nothing may be copied", src, tgt)
	}
}

// A copy and a move in one apply, with a ledger: the copy leaves its source queue as it was and
// puts exactly its messages on the target; the move empties its source; the audit data source
// shows both runs and their events.
func TestAccTransferRuns_ShowsTheRunsAndEventsOfACopyAndAMove(t *testing.T) {
	moved := newTransferFixture(t, 200)
	copied := newTransferFixture(t, 300)
	dsn := testAccLedgerDSN(t, copied.env)
	t.Setenv("TF_WORKSPACE", "")
	config := withLedger(testAccProviderBlock(copied.env, "source", "target"), dsn) + fmt.Sprintf(`
resource "artemis_queue_transfer" "copy" {
  mode   = "copy"
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}

resource "artemis_queue_transfer" "move" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}

data "artemis_transfer_runs" "copies" {
  source_queue = %q
  depends_on   = [artemis_queue_transfer.copy, artemis_queue_transfer.move]
}

data "artemis_transfer_runs" "moves" {
  source_queue = %q
  depends_on   = [artemis_queue_transfer.copy, artemis_queue_transfer.move]
}
`, copied.src, copied.tgt, moved.src, moved.tgt, copied.src, moved.src)
	copies, moves := "data.artemis_transfer_runs.copies", "data.artemis_transfer_runs.moves"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeAggregateTestCheckFunc(
				copied.checkDepths(300, 300),
				moved.checkDepths(0, 200),
				resource.TestCheckResourceAttr("artemis_queue_transfer.copy", "mode", "copy"),
				resource.TestCheckResourceAttr("artemis_queue_transfer.copy", "status", "completed"),
				resource.TestCheckResourceAttr("artemis_queue_transfer.copy", "messages_relayed", "300"),
				resource.TestCheckNoResourceAttr("artemis_queue_transfer.copy", "staging_queue"),
				resource.TestCheckResourceAttr(copies, "runs.#", "1"),
				resource.TestCheckResourceAttrPair(copies, "runs.0.run_id", "artemis_queue_transfer.copy", "run_id"),
				resource.TestCheckResourceAttr(copies, "runs.0.mode", "copy"),
				resource.TestCheckResourceAttr(copies, "runs.0.status", "completed"),
				resource.TestCheckResourceAttr(copies, "runs.0.relayed", "300"),
				resource.TestCheckResourceAttr(copies, "runs.0.returned", "0"),
				resource.TestMatchResourceAttr(copies, "runs.0.events.0.kind", regexp.MustCompile(`^created$`)),
				testCheckLastEventKind(copies, "completed"),
				resource.TestCheckResourceAttr(moves, "runs.#", "1"),
				resource.TestCheckResourceAttr(moves, "runs.0.mode", "move"),
				resource.TestCheckResourceAttr(moves, "runs.0.status", "completed"),
				resource.TestCheckResourceAttr(moves, "runs.0.relayed", "200"),
				testCheckLastEventKind(moves, "completed"),
				copied.checkTargetHoldsExactly(copied.ids),
				checkQueueHoldsExactly(copied.srcAdmin, copied.src, copied.ids),
				moved.checkTargetHoldsExactly(moved.ids),
			),
		}},
	})
}

// testCheckLastEventKind checks the kind of the last event of the first run a transfer-runs
// data source read.
func testCheckLastEventKind(name, kind string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[name]
		if !ok {
			return fmt.Errorf("%s is not in state", name)
		}
		n := rs.Primary.Attributes["runs.0.events.#"]
		if n == "" || n == "0" {
			return fmt.Errorf("%s: the run has no events", name)
		}
		var last int
		if _, err := fmt.Sscan(n, &last); err != nil {
			return err
		}
		if got := rs.Primary.Attributes[fmt.Sprintf("runs.0.events.%d.kind", last-1)]; got != kind {
			return fmt.Errorf("%s: the last event is %q, want %q", name, got, kind)
		}
		return nil
	}
}
