package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// A data source's arguments are checked when Terraform validates the configuration, before any
// read: each data source here depends on a resource that apply creates, so Terraform defers its
// read to apply, and only validation can fail the plan. The error names the attribute.
func TestAccDataSources_InvalidArgumentsFailThePlanNamingTheAttribute(t *testing.T) {
	clearArtemisEnv(t)
	provider := `
provider "artemis" {
  brokers = {
    dc1 = { management_url = "http://127.0.0.1:9/console/jolokia" } # never contacted
  }
}

resource "terraform_data" "later" {
  input = "known only after apply"
}
`
	for _, tt := range []struct {
		name, data string
		want       *regexp.Regexp
	}{
		{"queues name_regex", `data "artemis_queues" "d" {
  broker     = "dc1"
  name_regex = "orders("
}`, errorRe("Invalid name_regex", `name_regex = "orders("`, "RE2")},
		{"queues routing_type", `data "artemis_queues" "d" {
  broker       = "dc1"
  routing_type = "anycast"
}`, errorRe("Attribute routing_type value must be one of", "ANYCAST", `got: "anycast"`)},
		{"queues broker", `data "artemis_queues" "d" {
  broker = ""
}`, errorRe("Attribute broker string length must be at least 1")},
		{"queue name", `data "artemis_queue" "d" {
  broker = "dc1"
  name   = ""
}`, errorRe("Attribute name string length must be at least 1")},
		{"broker broker", `data "artemis_broker" "d" {
  broker = ""
}`, errorRe("Attribute broker string length must be at least 1")},
		{"transfer_runs status", `data "artemis_transfer_runs" "d" {
  status = "runnin"
}`, errorRe("Attribute status value must be one of", `"running"`, `got: "runnin"`)},
		{"transfer_runs limit", `data "artemis_transfer_runs" "d" {
  limit = 0
}`, errorRe("Attribute limit value must be between 1 and 10000, got: 0")},
		{"orphaned_transfers brokers", `data "artemis_orphaned_transfers" "d" {
  brokers = ["dc1", "dc1"]
}`, errorRe("Duplicate List Value", `brokers = ["dc1", "dc1"]`, `duplicate values of: "dc1"`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config := provider + tt.data[:len(tt.data)-1] + "  depends_on = [terraform_data.later]\n}\n"
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: config, PlanOnly: true, ExpectError: tt.want}},
			})
		})
	}
}
