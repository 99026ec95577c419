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
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// brokerObjectVersions are the brokers the broker-object resources are tested on: Artemis 2.40
// (target) and 2.31 (legacy).
var brokerObjectVersions = []string{"target", "legacy"}

// testAccCheckQueueDepth checks a queue's depth on the broker itself.
func testAccCheckQueueDepth(t *testing.T, env *testenv.Env, broker, queue string, want int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		got, err := testAccAdminClient(t, env, broker).QueueDepth(ctx, queue)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("queue %s on %s holds %d messages, want %d", queue, broker, got, want)
		}
		return nil
	}
}

// queueConfig is an address with both routing types and one queue on it, with the queue's
// attributes given as HCL lines.
func queueConfig(env *testenv.Env, broker, address, queue, queueAttrs string) string {
	return testAccAdminProviderBlock(env, broker) + fmt.Sprintf(`
resource "artemis_address" "a" {
  broker        = %[1]q
  name          = %[2]q
  routing_types = ["ANYCAST", "MULTICAST"]
}
resource "artemis_queue" "q" {
  broker  = %[1]q
  name    = %[3]q
  address = artemis_address.a.name
%[4]s
}
`, broker, address, queue, queueAttrs)
}

func TestAccQueueResource_LifecycleKeepsMessagesUnlessForced(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range brokerObjectVersions {
		t.Run(broker, func(t *testing.T) {
			address := testenv.UniqueName("acc.objects")
			queue := address + ".q"
			created := `  filter        = "color = 'red'"
  max_consumers = 5`
			updated := `  filter                = "color = 'blue'"
  max_consumers         = 2
  exclusive             = true
  purge_on_no_consumers = false
  ring_size             = 100
  enabled               = false`
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: queueConfig(env, broker, address, queue, created),
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_queue.q", "id", broker+"/"+queue),
							resource.TestCheckResourceAttr("artemis_queue.q", "routing_type", "ANYCAST"),
							resource.TestCheckResourceAttr("artemis_queue.q", "durable", "true"),
							resource.TestCheckResourceAttr("artemis_queue.q", "filter", "color = 'red'"),
							resource.TestCheckResourceAttr("artemis_queue.q", "max_consumers", "5"),
							resource.TestCheckResourceAttr("artemis_queue.q", "ring_size", "-1"),
							resource.TestCheckResourceAttr("artemis_queue.q", "enabled", "true"),
							resource.TestCheckResourceAttr("artemis_address.a", "routing_types.#", "2"),
						),
					},
					{
						// Deleted outside Terraform: gone from state, and the plan creates it again.
						PreConfig: func() {
							ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
							defer cancel()
							if err := testAccAdminClient(t, env, broker).DeleteQueue(ctx, queue); err != nil {
								t.Fatal(err)
							}
						},
						Config: queueConfig(env, broker, address, queue, created),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_queue.q", plancheck.ResourceActionCreate),
						}},
					},
					{
						// Changed in place: the queue keeps its messages.
						PreConfig: func() {
							env.Produce(t, broker, artemis.FQQN(address, queue), 3, "--properties", `[{"type":"string","key":"color","value":"red"}]`)
						},
						Config: queueConfig(env, broker, address, queue, updated),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_queue.q", plancheck.ResourceActionUpdate),
						}},
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_queue.q", "filter", "color = 'blue'"),
							resource.TestCheckResourceAttr("artemis_queue.q", "max_consumers", "2"),
							resource.TestCheckResourceAttr("artemis_queue.q", "exclusive", "true"),
							resource.TestCheckResourceAttr("artemis_queue.q", "ring_size", "100"),
							resource.TestCheckResourceAttr("artemis_queue.q", "enabled", "false"),
							testAccCheckQueueDepth(t, env, broker, queue, 3),
						),
					},
					{
						// A change that needs a new queue is refused while the queue holds messages.
						Config:      queueConfig(env, broker, address, queue, updated+"\n  routing_type = \"MULTICAST\""),
						ExpectError: regexp.MustCompile(`(?s)queue "` + regexp.QuoteMeta(queue) + `".*holds 3 message.*force_destroy = true`),
					},
					{
						// So is a destroy.
						Config: testAccAdminProviderBlock(env, broker) + fmt.Sprintf(`
resource "artemis_address" "a" {
  broker        = %q
  name          = %q
  routing_types = ["ANYCAST", "MULTICAST"]
}
`, broker, address),
						ExpectError: regexp.MustCompile(`(?s)holds 3 message.*Nothing was deleted`),
					},
					{
						Config: queueConfig(env, broker, address, queue, updated+"\n  force_destroy = true"),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_queue.q", plancheck.ResourceActionUpdate),
						}},
						Check: testAccCheckQueueDepth(t, env, broker, queue, 3),
					},
					{
						// With force_destroy the replacement drops them, as asked.
						Config: queueConfig(env, broker, address, queue, updated+"\n  force_destroy = true\n  durable = false\n  routing_type = \"MULTICAST\""),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_queue.q", plancheck.ResourceActionDestroyBeforeCreate),
						}},
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_queue.q", "durable", "false"),
							resource.TestCheckResourceAttr("artemis_queue.q", "routing_type", "MULTICAST"),
							testAccCheckQueueDepth(t, env, broker, queue, 0),
						),
					},
					{
						ResourceName:            "artemis_queue.q",
						ImportState:             true,
						ImportStateId:           broker + "/" + queue,
						ImportStateVerify:       true,
						ImportStateVerifyIgnore: []string{"force_destroy"},
					},
				},
			})
		})
	}
}

func TestAccQueueResource_LastValueQueueReadsBackTheSameOnEveryVersion(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range brokerObjectVersions {
		t.Run(broker, func(t *testing.T) {
			address := testenv.UniqueName("acc.objects.lvq")
			config := queueConfig(env, broker, address, address+".q", `  last_value     = true
  last_value_key = "sku"`)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: config,
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_queue.q", "last_value", "true"),
							resource.TestCheckResourceAttr("artemis_queue.q", "last_value_key", "sku"),
						),
					},
					{Config: config, PlanOnly: true},
				},
			})
		})
	}
}

func TestAccQueueResource_LastValueKeyWithoutLastValueNamesTheAttribute(t *testing.T) {
	env := testenv.Require(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      queueConfig(env, "target", "acc.never", "acc.never.q", `  last_value_key = "sku"`),
			ExpectError: regexp.MustCompile(`(?s)last_value_key needs last_value = true.*Set last_value = true`),
		}},
	})
}

func addressConfig(env *testenv.Env, broker, address, attrs string) string {
	return testAccAdminProviderBlock(env, broker) + fmt.Sprintf(`
resource "artemis_address" "a" {
  broker = %q
  name   = %q
%s
}
`, broker, address, attrs)
}

func TestAccAddressResource_LifecycleRefusesToDropQueuesAndMessages(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range brokerObjectVersions {
		t.Run(broker, func(t *testing.T) {
			address := testenv.UniqueName("acc.objects.address")
			outsider := address + ".outsider"
			anycast := `  routing_types = ["ANYCAST"]`
			both := `  routing_types = ["MULTICAST", "ANYCAST"]`
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: addressConfig(env, broker, address, anycast),
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_address.a", "id", broker+"/"+address),
							resource.TestCheckResourceAttr("artemis_address.a", "routing_types.#", "1"),
							resource.TestCheckTypeSetElemAttr("artemis_address.a", "routing_types.*", "ANYCAST"),
						),
					},
					{
						PreConfig: func() {
							ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
							defer cancel()
							if err := testAccAdminClient(t, env, broker).DeleteAddress(ctx, address, false); err != nil {
								t.Fatal(err)
							}
						},
						Config: addressConfig(env, broker, address, anycast),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_address.a", plancheck.ResourceActionCreate),
						}},
					},
					{
						Config: addressConfig(env, broker, address, both),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_address.a", plancheck.ResourceActionUpdate),
						}},
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_address.a", "routing_types.#", "2"),
							resource.TestCheckTypeSetElemAttr("artemis_address.a", "routing_types.*", "MULTICAST"),
						),
					},
					{
						ResourceName:            "artemis_address.a",
						ImportState:             true,
						ImportStateId:           broker + "/" + address,
						ImportStateVerify:       true,
						ImportStateVerifyIgnore: []string{"force_destroy"},
					},
					{
						// A queue made outside Terraform, with messages: destroying the address is refused.
						PreConfig: func() {
							ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
							defer cancel()
							if err := testAccAdminClient(t, env, broker).DeclareQueue(ctx, artemis.QueueDefinition{Name: outsider, Address: address,
								RoutingType: "ANYCAST", Durable: true, MaxConsumers: -1, RingSize: -1, Enabled: true}); err != nil {
								t.Fatal(err)
							}
							env.Produce(t, broker, artemis.FQQN(address, outsider), 2)
						},
						Config:      testAccAdminProviderBlock(env, broker),
						ExpectError: regexp.MustCompile(`(?s)address "` + regexp.QuoteMeta(address) + `".*` + regexp.QuoteMeta(outsider) + `.*holds 2 message.*force_destroy = true`),
					},
					{
						Config: addressConfig(env, broker, address, both+"\n  force_destroy = true"),
						Check:  testAccCheckQueueDepth(t, env, broker, outsider, 2),
					},
				},
				CheckDestroy: func(*terraform.State) error {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					c := testAccAdminClient(t, env, broker)
					if _, err := c.Address(ctx, address); err == nil {
						return fmt.Errorf("address %s still exists after a forced destroy", address)
					}
					if _, err := c.Queue(ctx, outsider); err == nil {
						return fmt.Errorf("queue %s still exists after its address's forced destroy", outsider)
					}
					return nil
				},
			})
		})
	}
}

// settingsConfig is one address-settings entry with the given attribute lines.
func settingsConfig(env *testenv.Env, broker, match, attrs string) string {
	return testAccAdminProviderBlock(env, broker) + fmt.Sprintf(`
resource "artemis_address_settings" "s" {
  broker = %q
  match  = %q
%s
}
`, broker, match, attrs)
}

func TestAccAddressSettingsResource_Lifecycle(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range brokerObjectVersions {
		t.Run(broker, func(t *testing.T) {
			prefix := testenv.UniqueName("acc.settings")
			match := prefix + ".#"
			first := `  address_full_policy   = "FAIL"
  max_size_bytes        = 1048576
  page_size_bytes       = 65536
  dead_letter_address   = "DLQ.settings"
  expiry_address        = "EXP.settings"
  expiry_delay_ms          = 60000
  redelivery_delay_ms      = 250
  max_delivery_attempts = 4
  send_to_dla_on_no_route = true
  auto_create_queues    = false`
			second := strings.ReplaceAll(strings.ReplaceAll(first, `"FAIL"`, `"BLOCK"`), "= 4", "= 7")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: settingsConfig(env, broker, match, first),
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_address_settings.s", "id", broker+"/"+match),
							resource.TestCheckResourceAttr("artemis_address_settings.s", "address_full_policy", "FAIL"),
							resource.TestCheckResourceAttr("artemis_address_settings.s", "max_size_bytes", "1048576"),
							resource.TestCheckResourceAttr("artemis_address_settings.s", "dead_letter_address", "DLQ.settings"),
							resource.TestCheckResourceAttr("artemis_address_settings.s", "max_delivery_attempts", "4"),
							resource.TestCheckNoResourceAttr("artemis_address_settings.s", "redistribution_delay_ms"),
							testAccCheckEffectiveSettings(t, env, broker, prefix+".orders", "FAIL", "DLQ.settings"),
						),
					},
					{
						// Changed outside Terraform: read back, and the plan changes it back.
						PreConfig: func() {
							ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
							defer cancel()
							if err := testAccAdminClient(t, env, broker).AddAddressSettings(ctx, match, map[string]any{
								"addressFullMessagePolicy": "DROP", "maxSizeBytes": 1048576, "pageSizeBytes": 65536,
							}); err != nil {
								t.Fatal(err)
							}
						},
						Config: settingsConfig(env, broker, match, first),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_address_settings.s", plancheck.ResourceActionUpdate),
						}},
						Check: resource.TestCheckResourceAttr("artemis_address_settings.s", "address_full_policy", "FAIL"),
					},
					{
						// Removed outside Terraform: the entry's values fall back, and the plan adds it again.
						PreConfig: func() {
							ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
							defer cancel()
							if err := testAccAdminClient(t, env, broker).RemoveAddressSettings(ctx, match); err != nil {
								t.Fatal(err)
							}
						},
						Config: settingsConfig(env, broker, match, first),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_address_settings.s", plancheck.ResourceActionUpdate),
						}},
						Check: testAccCheckEffectiveSettings(t, env, broker, prefix+".orders", "FAIL", "DLQ.settings"),
					},
					{
						Config: settingsConfig(env, broker, match, second),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("artemis_address_settings.s", plancheck.ResourceActionUpdate),
						}},
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_address_settings.s", "address_full_policy", "BLOCK"),
							resource.TestCheckResourceAttr("artemis_address_settings.s", "max_delivery_attempts", "7"),
							testAccCheckEffectiveSettings(t, env, broker, prefix+".orders", "BLOCK", "DLQ.settings"),
						),
					},
					{
						ResourceName:  "artemis_address_settings.s",
						ImportState:   true,
						ImportStateId: broker + "/" + match,
						ImportStateCheck: func(states []*terraform.InstanceState) error {
							if len(states) != 1 {
								return fmt.Errorf("imported %d states, want 1", len(states))
							}
							for attr, want := range map[string]string{"address_full_policy": "BLOCK", "max_size_bytes": "1048576",
								"dead_letter_address": "DLQ.settings", "max_delivery_attempts": "7", "id": broker + "/" + match} {
								if got := states[0].Attributes[attr]; got != want {
									return fmt.Errorf("imported %s = %q, want %q", attr, got, want)
								}
							}
							return nil
						},
					},
				},
				CheckDestroy: func(*terraform.State) error {
					return testAccCheckEffectiveSettings(t, env, broker, prefix+".orders", "PAGE", "DLQ")(nil)
				},
			})
		})
	}
}

func TestAccAddressSettingsResource_NewerSettingsOn240AndARefusalNamingTheAttributeOn231(t *testing.T) {
	env := testenv.Require(t)
	attrs := `  max_size_messages       = 5000
  page_limit_messages     = 100000
  page_full_policy        = "FAIL"
  duplicate_id_cache_size = 3000`
	match := testenv.UniqueName("acc.settings.new") + ".#"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: settingsConfig(env, "target", match, attrs),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("artemis_address_settings.s", "max_size_messages", "5000"),
				resource.TestCheckResourceAttr("artemis_address_settings.s", "page_limit_messages", "100000"),
				resource.TestCheckResourceAttr("artemis_address_settings.s", "page_full_policy", "FAIL"),
				resource.TestCheckResourceAttr("artemis_address_settings.s", "duplicate_id_cache_size", "3000"),
			),
		}, {
			Config: settingsConfig(env, "target", match, attrs), PlanOnly: true,
		}},
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      settingsConfig(env, "legacy", match, attrs),
			ExpectError: regexp.MustCompile(`(?s)max_size_messages.*Artemis 2\.31\.2.*needs 2\.32 or later.*Remove max_size_messages`),
		}},
	})
}

func TestAccBrokerObjects_SurviveABrokerRestartUnchanged(t *testing.T) {
	env := testenv.RequireOwned(t)
	for _, broker := range brokerObjectVersions {
		t.Run(broker, func(t *testing.T) {
			address := testenv.UniqueName("acc.objects.restart")
			config := queueConfig(env, broker, address, address+".q", `  filter        = "color = 'red'"
  max_consumers = 3
  ring_size     = 50`) + fmt.Sprintf(`
resource "artemis_address_settings" "s" {
  broker                = %q
  match                 = %q
  address_full_policy   = "FAIL"
  max_size_bytes        = 1048576
  page_size_bytes       = 65536
  dead_letter_address   = "DLQ.restart"
  max_delivery_attempts = 4
}
`, broker, address)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: config},
					{
						// Made through management, not broker.xml: after a stop and a start the broker
						// still has the address, the queue and the settings entry, as declared.
						PreConfig: func() {
							if err := env.StopBroker(broker); err != nil {
								t.Fatalf("StopBroker: %v", err)
							}
							if err := env.StartBroker(broker); err != nil {
								t.Fatalf("StartBroker: %v", err)
							}
						},
						Config:   config,
						PlanOnly: true,
					},
					{
						Config: config,
						Check:  testAccCheckEffectiveSettings(t, env, broker, address, "FAIL", "DLQ.restart"),
					},
				},
			})
		})
	}
}
