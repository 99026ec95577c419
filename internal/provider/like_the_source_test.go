package provider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// likeTheSourceConfig is the two documented "like the source" examples as one configuration,
// pointed at a source broker, the target broker and one queue.
func likeTheSourceConfig(t *testing.T, env *testenv.Env, sourceBroker, queue string) string {
	t.Helper()
	read := func(name string) string {
		raw, err := os.ReadFile("../../examples/resources/" + name + "/like-the-source.tf")
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	queueExample := read("artemis_queue")
	settingsExample := read("artemis_address_settings")
	// Both examples read the source queue with the same data block; keep the first.
	start := strings.Index(settingsExample, `data "artemis_queue" "source" {`)
	end := strings.Index(settingsExample[start:], "}\n")
	if start < 0 || end < 0 {
		t.Fatal("the settings example has no data \"artemis_queue\" \"source\" block")
	}
	settingsExample = settingsExample[:start] + settingsExample[start+end+2:]
	config := queueExample + settingsExample
	config = strings.ReplaceAll(config, `"dc1"`, fmt.Sprintf("%q", sourceBroker))
	config = strings.ReplaceAll(config, `"dc2"`, `"target"`)
	config = strings.ReplaceAll(config, `"orders"`, fmt.Sprintf("%q", queue))
	return testAccAdminProviderBlock(env, sourceBroker, "target") + config
}

func TestAccLikeTheSource_TargetKeepsWhatTheSourceKeepsAndPlansNoChange(t *testing.T) {
	env := testenv.Require(t)
	for _, source := range []string{"source", "legacy"} {
		t.Run(source, func(t *testing.T) {
			queue := testenv.UniqueName("acc.like")
			// A queue grouped by a last-value key alone (which 2.40 reports as last_value false),
			// with a filter, a consumer limit and exclusive delivery.
			testAccQueue(t, env, source, artemis.QueueSpec{Name: queue, Address: queue, Durable: true, Filter: "region = 'eu'",
				RingSize: -1, LastValueKey: "sku", Exclusive: true, MaxConsumers: 3})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			admin := testAccAdminClient(t, env, source)
			if err := admin.AddAddressSettings(ctx, queue, map[string]any{
				"addressFullMessagePolicy": "FAIL", "maxSizeBytes": 2097152, "pageSizeBytes": 65536,
				"deadLetterAddress": "DLQ.like", "expiryDelay": 3600000, "maxDeliveryAttempts": 3, "redeliveryDelay": 500,
			}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_ = admin.RemoveAddressSettings(ctx, queue)
			})
			config := likeTheSourceConfig(t, env, source, queue)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: config,
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("artemis_queue.target", "filter", "region = 'eu'"),
							resource.TestCheckResourceAttr("artemis_queue.target", "max_consumers", "3"),
							resource.TestCheckResourceAttr("artemis_queue.target", "exclusive", "true"),
							resource.TestCheckResourceAttr("artemis_queue.target", "last_value", "true"),
							resource.TestCheckResourceAttr("artemis_queue.target", "last_value_key", "sku"),
							resource.TestCheckResourceAttr("artemis_queue.target", "durable", "true"),
							resource.TestCheckResourceAttr("artemis_address_settings.target", "address_full_policy", "FAIL"),
							resource.TestCheckResourceAttr("artemis_address_settings.target", "max_size_bytes", "2097152"),
							resource.TestCheckResourceAttr("artemis_address_settings.target", "expiry_delay_ms", "3600000"),
							resource.TestCheckResourceAttr("artemis_address_settings.target", "max_delivery_attempts", "3"),
							resource.TestCheckResourceAttr("artemis_address_settings.target", "redelivery_delay_ms", "500"),
							resource.TestCheckResourceAttr("artemis_address_settings.target", "duplicate_id_cache_size", "20000"),
							testAccCheckEffectiveSettings(t, env, "target", queue, "FAIL", "DLQ.like"),
						),
					},
					{Config: config, PlanOnly: true},
				},
			})
		})
	}
}
