package provider

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// closedLoopbackPort returns a loopback port nothing listens on.
func closedLoopbackPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// A ledger that cannot be reached fails the plan on ledger_dsn, naming the server and the
// cause, never the password.
func TestProviderConfigure_UnreachableLedgerIsAnErrorOnLedgerDSNWithoutThePassword(t *testing.T) {
	addr := closedLoopbackPort(t)
	const password = "ledger-pw-must-not-show"
	resp := configureWith(t, func(objType tftypes.Object) tftypes.Value {
		top := oneBrokerConfig(objType, tftypes.NewValue(tftypes.String, "broker-pw"))
		top["ledger_dsn"] = tftypes.NewValue(tftypes.String, "postgres://auditor:"+password+"@"+addr+"/ledger?connect_timeout=5")
		return tftypes.NewValue(objType, top)
	})
	errs := resp.Diagnostics.Errors()
	if len(errs) != 1 {
		t.Fatalf("want one error, got %v", resp.Diagnostics)
	}
	withPath, ok := errs[0].(interface{ Path() path.Path })
	if !ok || !withPath.Path().Equal(path.Root("ledger_dsn")) {
		t.Errorf("the error is not on ledger_dsn: %v", errs[0])
	}
	text := diagText(errs[0])
	if !strings.Contains(text, addr) || !strings.Contains(text, "refused") {
		t.Errorf("the error does not name %s and the cause: %s", addr, text)
	}
	t.Log(text)
	if strings.Contains(text, password) {
		t.Errorf("the error shows the password: %s", text)
	}
	if resp.ResourceData != nil {
		t.Error("the provider was configured despite an unusable ledger")
	}
}

func TestAccTransferRuns_ShowsTheRunAndEventsOfAMoveMadeWithALedger(t *testing.T) {
	f := newTransferFixture(t, 300)
	dsn := testAccLedgerDSN(t, f.env)
	t.Setenv("TF_WORKSPACE", "") // the workspace recorded is then "default"
	config := withLedger(testAccProviderBlock(f.env, "source", "target"), dsn) + fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}

data "artemis_transfer_runs" "audit" {
  source_queue = %q
  status       = "completed"
  depends_on   = [artemis_queue_transfer.t]
}
`, f.src, f.tgt, f.src)
	runs := "data.artemis_transfer_runs.audit"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeAggregateTestCheckFunc(
				f.checkDepths(0, 300),
				resource.TestCheckResourceAttr(runs, "runs.#", "1"),
				resource.TestCheckResourceAttrPair(runs, "runs.0.run_id", "artemis_queue_transfer.t", "run_id"),
				resource.TestCheckResourceAttr(runs, "runs.0.status", "completed"),
				resource.TestCheckResourceAttr(runs, "runs.0.mode", "move"),
				resource.TestCheckResourceAttr(runs, "runs.0.source_broker", "source"),
				resource.TestCheckResourceAttr(runs, "runs.0.target_queue", f.tgt),
				resource.TestCheckResourceAttr(runs, "runs.0.staged", "300"),
				resource.TestCheckResourceAttr(runs, "runs.0.relayed", "300"),
				resource.TestCheckResourceAttr(runs, "runs.0.returned", "0"),
				resource.TestCheckResourceAttr(runs, "runs.0.terraform_workspace", "default"),
				resource.TestCheckResourceAttrSet(runs, "runs.0.created_by_user"),
				resource.TestCheckResourceAttrSet(runs, "runs.0.created_by_host"),
				resource.TestCheckNoResourceAttr(runs, "runs.0.lease_holder"),
				resource.TestCheckResourceAttr(runs, "runs.0.events.#", "3"),
				resource.TestCheckResourceAttr(runs, "runs.0.events.0.kind", "created"),
				resource.TestCheckResourceAttr(runs, "runs.0.events.1.kind", "lease-taken"),
				resource.TestCheckResourceAttr(runs, "runs.0.events.2.kind", "completed"),
				resource.TestMatchResourceAttr(runs, "runs.0.events.2.detail", regexp.MustCompile(`"relayed_total":300`)),
			),
		}},
	})
}

// With the real Terraform CLI: the plan fails on ledger_dsn, naming the server and the cause.
func TestAccProviderConfig_UnreachableLedgerFailsThePlanOnLedgerDSN(t *testing.T) {
	f := newTransferFixture(t, 0)
	addr := closedLoopbackPort(t)
	config := withLedger(testAccProviderBlock(f.env, "source", "target"), "postgres://auditor:ledger-pw@"+addr+"/ledger?connect_timeout=5") +
		fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}
`, f.src, f.tgt)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config, PlanOnly: true,
			ExpectError: errorRe("Cannot use the transfer ledger", addr, "connection refused", "ledger_dsn"),
		}},
	})
}
