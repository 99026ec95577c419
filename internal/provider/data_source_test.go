package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

func TestAccBrokerDataSource_ReadsVersionNameAndDuplicateCache(t *testing.T) {
	env := testenv.Require(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderBlock(env, "source", "legacy") + `
data "artemis_broker" "source" { broker = "source" }
data "artemis_broker" "legacy" { broker = "legacy" }
`,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.artemis_broker.source", "version", env.Brokers["source"].Version),
				resource.TestCheckResourceAttr("data.artemis_broker.source", "broker_name", "source"),
				resource.TestCheckResourceAttr("data.artemis_broker.source", "security_enabled", "true"),
				resource.TestCheckResourceAttr("data.artemis_broker.source", "duplicate_id_cache_size", "20000"),
				resource.TestCheckResourceAttr("data.artemis_broker.source", "duplicate_id_cache_persisted", "true"),
				resource.TestMatchResourceAttr("data.artemis_broker.source", "node_id", regexp.MustCompile(`^[0-9a-f-]{36}$`)),
				resource.TestCheckResourceAttr("data.artemis_broker.legacy", "version", env.Brokers["legacy"].Version),
			),
		}},
	})
}

func TestAccBrokerDataSource_UnknownBrokerNamesTheAttributeAndTheChoices(t *testing.T) {
	env := testenv.Require(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      testAccProviderBlock(env, "source", "target") + `data "artemis_broker" "x" { broker = "dc9" }`,
			ExpectError: regexp.MustCompile(`(?s)no broker named "dc9".*configured brokers: source,\s+target.*Set broker to`),
		}},
	})
}

func TestAccBrokerDataSource_WrongPasswordNamesBrokerAndUser(t *testing.T) {
	env := testenv.Require(t)
	b := env.Broker(t, "source")
	config := fmt.Sprintf(`
provider "artemis" {
  brokers = {
    dc1 = {
      amqp_urls      = [%q]
      management_url = %q
      username       = "transfer"
      password       = "not-the-password"
    }
  }
}
data "artemis_broker" "x" { broker = "dc1" }
`, b.AMQPURL, b.ManagementURL)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: regexp.MustCompile(`(?s)broker "dc1".*refused the login of user\s+"transfer".*check the\s+password`),
		}},
	})
}

func TestAccQueueDataSource_ReadsQueueDepthAndEffectiveSettings(t *testing.T) {
	env := testenv.Require(t)
	address := testenv.UniqueName("acc.queue")
	plain, ring := address+".plain", address+".ring"
	testAccQueue(t, env, "source", artemis.QueueSpec{Name: plain, Address: address, Durable: true, RingSize: -1, MaxConsumers: -1})
	testAccQueue(t, env, "source", artemis.QueueSpec{Name: ring, Address: address, RoutingType: "MULTICAST", Durable: true,
		Filter: "color = 'red'", RingSize: 5, MaxConsumers: -1})
	env.Produce(t, "source", artemis.FQQN(address, plain), 12)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderBlock(env, "source", "legacy") + fmt.Sprintf(`
data "artemis_queue" "plain" {
  broker = "source"
  name   = %q
}
data "artemis_queue" "ring" {
  broker = "source"
  name   = %q
}
data "artemis_queue" "legacy_dlq" {
  broker = "legacy"
  name   = "DLQ"
}
`, plain, ring),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "id", "source/"+plain),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "address", address),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "fqqn", artemis.FQQN(address, plain)),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "routing_type", "ANYCAST"),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "message_count", "12"),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "consumer_count", "0"),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "ring_size", "-1"),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "filter", ""),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "address_settings.address_full_policy", "PAGE"),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "address_settings.dead_letter_address", "DLQ"),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "address_settings.max_delivery_attempts", "10"),
				resource.TestCheckResourceAttr("data.artemis_queue.plain", "address_settings.duplicate_id_cache_size", "20000"),
				resource.TestCheckResourceAttr("data.artemis_queue.ring", "routing_type", "MULTICAST"),
				resource.TestCheckResourceAttr("data.artemis_queue.ring", "ring_size", "5"),
				resource.TestCheckResourceAttr("data.artemis_queue.ring", "filter", "color = 'red'"),
				resource.TestCheckResourceAttr("data.artemis_queue.legacy_dlq", "address", "DLQ"),
				resource.TestCheckResourceAttr("data.artemis_queue.legacy_dlq", "address_settings.expiry_address", "ExpiryQueue"),
				resource.TestCheckResourceAttr("data.artemis_queue.legacy_dlq", "address_settings.duplicate_id_cache_size", "20000"),
			),
		}},
	})
}

func TestAccQueueDataSource_MissingQueueIsAnErrorOnName(t *testing.T) {
	env := testenv.Require(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderBlock(env, "source") + `
data "artemis_queue" "x" {
  broker = "source"
  name   = "no.such.queue"
}`,
			ExpectError: regexp.MustCompile(`(?s)Queue not found.*"no.such.queue" does not exist`),
		}},
	})
}
