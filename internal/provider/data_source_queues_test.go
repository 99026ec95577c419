package provider

import (
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

func TestSelectQueues_ListsTheApplicationsQueuesThatMatch(t *testing.T) {
	all := []artemis.QueueSummary{
		{Name: "$.artemis.internal.sf.my-cluster.n2", RoutingType: "MULTICAST", Internal: true},
		{Name: "DLQ", RoutingType: "ANYCAST"},
		{Name: "notif.abc", RoutingType: "MULTICAST", Temporary: true, Internal: true},
		{Name: "orders", RoutingType: "ANYCAST"},
		{Name: "orders.audit", RoutingType: "MULTICAST"},
		{Name: "reply.tmp", RoutingType: "ANYCAST", Temporary: true},
		{Name: transfer.StagingPrefix + "0123456789ab-mx4k", RoutingType: "ANYCAST"},
		{Name: transfer.StagingPrefix + "0123456789ab-mx4k.manifest", RoutingType: "ANYCAST"},
	}
	names := func(qs []artemis.QueueSummary) []string {
		out := []string{}
		for _, q := range qs {
			out = append(out, q.Name)
		}
		return out
	}
	tests := []struct {
		name string
		sel  queueSelection
		want []string
	}{
		{"everything but internal, temporary and transfer queues", queueSelection{}, []string{"DLQ", "orders", "orders.audit"}},
		{"an unanchored pattern matches anywhere in the name", queueSelection{Pattern: regexp.MustCompile(`orders`)}, []string{"orders", "orders.audit"}},
		{"an anchored pattern matches one name", queueSelection{Pattern: regexp.MustCompile(`^orders$`)}, []string{"orders"}},
		{"by routing type", queueSelection{RoutingType: "MULTICAST"}, []string{"orders.audit"}},
		{"transfer queues when asked, internal ones never", queueSelection{IncludeTransferQueues: true, Pattern: regexp.MustCompile(`studio|artemis`)},
			[]string{transfer.StagingPrefix + "0123456789ab-mx4k", transfer.StagingPrefix + "0123456789ab-mx4k.manifest"}},
		{"nothing matches", queueSelection{Pattern: regexp.MustCompile(`^payments`)}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(selectQueues(all, tt.sel)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAccQueuesDataSource_ListsByPatternAndRoutingTypeWithDepthAndConsumers lists queues made
// for the test (an anycast one holding three messages, a multicast one, and one named like a
// transfer's own) by a pattern, by routing type, and with the transfer queues.
func TestAccQueuesDataSource_ListsByPatternAndRoutingTypeWithDepthAndConsumers(t *testing.T) {
	env := testenv.Require(t)
	token := testenv.UniqueName("queues")
	a, b, c := token+".a", token+".b", transfer.StagingPrefix+token+".c"
	testAccQueue(t, env, "source", artemis.QueueSpec{Name: a, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: -1})
	testAccQueue(t, env, "source", artemis.QueueSpec{Name: b, RoutingType: "MULTICAST", Durable: true, RingSize: -1, MaxConsumers: -1})
	testAccQueue(t, env, "source", artemis.QueueSpec{Name: c, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: -1})
	env.Produce(t, "source", artemis.FQQN(a, a), 3)
	pattern := fmt.Sprintf("%q", regexp.QuoteMeta(token))
	const ds = "data.artemis_queues.q"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: testAccProviderBlock(env, "source") + `data "artemis_queues" "q" {
  broker     = "source"
  name_regex = ` + pattern + `
}`,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(ds, "names.#", "2"),
					resource.TestCheckResourceAttr(ds, "names.0", a),
					resource.TestCheckResourceAttr(ds, "names.1", b),
					resource.TestCheckResourceAttr(ds, "queues.%", "2"),
					resource.TestCheckResourceAttr(ds, "queues."+a+".address", a),
					resource.TestCheckResourceAttr(ds, "queues."+a+".fqqn", artemis.FQQN(a, a)),
					resource.TestCheckResourceAttr(ds, "queues."+a+".routing_type", "ANYCAST"),
					resource.TestCheckResourceAttr(ds, "queues."+a+".durable", "true"),
					resource.TestCheckResourceAttr(ds, "queues."+a+".message_count", "3"),
					resource.TestCheckResourceAttr(ds, "queues."+a+".consumer_count", "0"),
					resource.TestCheckResourceAttr(ds, "queues."+a+".transfer_queue", "false"),
					resource.TestCheckResourceAttr(ds, "queues."+b+".routing_type", "MULTICAST"),
					resource.TestCheckResourceAttr(ds, "queues."+b+".message_count", "0"),
				),
			},
			{
				Config: testAccProviderBlock(env, "source") + `data "artemis_queues" "q" {
  broker       = "source"
  name_regex   = ` + pattern + `
  routing_type = "ANYCAST"
}`,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(ds, "names.#", "1"),
					resource.TestCheckResourceAttr(ds, "names.0", a),
				),
			},
			{
				Config: testAccProviderBlock(env, "source") + `data "artemis_queues" "q" {
  broker                  = "source"
  name_regex              = ` + pattern + `
  include_transfer_queues = true
}`,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(ds, "names.#", "3"),
					resource.TestCheckResourceAttr(ds, "queues."+c+".transfer_queue", "true"),
					resource.TestCheckResourceAttr(ds, "queues."+a+".transfer_queue", "false"),
				),
			},
		},
	})
}

// TestAccQueuesDataSource_NeverListsTheBrokersInternalQueues: a cluster node has a
// store-and-forward queue per other node ($.artemis.internal.sf.*) and its own $sys queues;
// none of them is listed, and the node's application queue is.
func TestAccQueuesDataSource_NeverListsTheBrokersInternalQueues(t *testing.T) {
	env := testenv.Require(t)
	env.Broker(t, "node1")
	q := testenv.UniqueName("queues.node")
	testAccQueue(t, env, "node1", artemis.QueueSpec{Name: q, RoutingType: "ANYCAST", Durable: true, RingSize: -1, MaxConsumers: -1})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderBlock(env, "node1") + `data "artemis_queues" "all" { broker = "node1" }`,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.artemis_queues.all", "queues."+q+".name", q),
				func(s *terraform.State) error {
					attrs := s.RootModule().Resources["data.artemis_queues.all"].Primary.Attributes
					for k, v := range attrs {
						if regexp.MustCompile(`^names\.\d+$`).MatchString(k) && regexp.MustCompile(`^\$|^notif\.`).MatchString(v) {
							return fmt.Errorf("internal queue %s is listed", v)
						}
					}
					return nil
				},
			),
		}},
	})
}

func TestAccQueuesDataSource_RefusesABadPatternOnItsAttribute(t *testing.T) {
	env := testenv.Require(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      testAccProviderBlock(env, "source") + `data "artemis_queues" "q" {` + "\n" + `  broker = "source"` + "\n" + `  name_regex = "orders("` + "\n}",
				ExpectError: regexp.MustCompile(`(?s)Invalid name_regex.*RE2 syntax`),
			},
			{
				Config:      testAccProviderBlock(env, "source") + `data "artemis_queues" "q" {` + "\n" + `  broker = "source"` + "\n" + `  routing_type = "anycast"` + "\n}",
				ExpectError: regexp.MustCompile(`(?s)routing_type.*ANYCAST`),
			},
		},
	})
}
