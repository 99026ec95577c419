package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// A move with both brokers reached only over TLS, Jolokia over https and AMQP over amqps, with
// the environment's private CA, moves every message exactly once.
func TestAccQueueTransfer_MovesOverHTTPSManagementAndAMQPSWithAPrivateCA(t *testing.T) {
	const n = 300
	f := newTransferFixture(t, n)
	requireTLSEndpoints(t, f.env)
	ca := map[string]string{"source": f.env.TLSCAFile, "target": f.env.TLSCAFile}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccHTTPSProviderBlock(f.env, ca, true) + f.resourceBlock(),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(n)),
				statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("status"), knownvalue.StringExact("completed")),
			},
			Check: resource.ComposeAggregateTestCheckFunc(f.checkNoRuns(), f.checkDepths(0, n), f.checkTargetHoldsExactly(f.ids)),
		}},
	})
}

// A source whose https management certificate the configured CA did not sign is refused at
// plan on the source broker, saying which endpoint and to set the CA; nothing moves.
func TestAccQueueTransfer_WrongCAForHTTPSManagementRefusesAtPlanAndMovesNothing(t *testing.T) {
	const n = 20
	f := newTransferFixture(t, n)
	requireTLSEndpoints(t, f.env)
	otherCA, _ := testenv.SelfSignedPEM(t) // a freshly made CA that signed nothing of the broker's
	caFile := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(caFile, []byte(otherCA), 0o600); err != nil {
		t.Fatal(err)
	}
	ca := map[string]string{"source": caFile, "target": f.env.TLSCAFile}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:   testAccHTTPSProviderBlock(f.env, ca, false) + f.resourceBlock(),
			PlanOnly: true,
			ExpectError: errorRe("TLS certificate is not trusted (source.broker)",
				"the TLS certificate of "+f.env.Brokers["source"].ManagementHTTPSURL+" is not trusted", "tls.ca_cert_file"),
		}},
	})
	f.checkNothingMovedBy(t, n)
}

// requireTLSEndpoints skips a test on an environment made before the brokers had https
// management and AMQPS on both sides.
func requireTLSEndpoints(t *testing.T, env *testenv.Env) {
	t.Helper()
	for _, name := range []string{"source", "target"} {
		b := env.Broker(t, name)
		if b.ManagementHTTPSURL == "" || b.AMQPSURL == "" || env.TLSCAFile == "" {
			t.Skipf("broker %q of the test environment has no https management or AMQPS endpoint (made by an older scripts/testenv.sh): recreate it", name)
		}
	}
}

// testAccHTTPSProviderBlock names the source and the target with their https management URLs
// and the CA file of each, as the transfer user; with amqps, over their AMQPS URLs only,
// otherwise over plain AMQP.
func testAccHTTPSProviderBlock(env *testenv.Env, caFiles map[string]string, amqps bool) string {
	var b strings.Builder
	b.WriteString("provider \"artemis\" {\n  brokers = {\n")
	for _, name := range []string{"source", "target"} {
		br := env.Brokers[name]
		url := br.AMQPURL
		if amqps {
			url = br.AMQPSURL
		}
		fmt.Fprintf(&b, "    %s = {\n      amqp_urls      = [%q]\n      management_url = %q\n", name, url, br.ManagementHTTPSURL)
		fmt.Fprintf(&b, "      username       = %q\n      password       = %q\n", env.TransferUser, env.TransferPassword)
		fmt.Fprintf(&b, "      tls            = { ca_cert_file = %q }\n    }\n", caFiles[name])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}
