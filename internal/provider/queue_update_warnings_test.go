package provider

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

func plainQueueModel() queueResourceModel {
	return queueResourceModel{
		Broker: types.StringValue("dc1"), Name: types.StringValue("orders"), Address: types.StringValue("orders"),
		RoutingType: types.StringValue("ANYCAST"), Durable: types.BoolValue(true), Filter: types.StringValue(""),
		MaxConsumers: types.Int64Value(-1), Exclusive: types.BoolValue(false), LastValue: types.BoolValue(false),
		LastValueKey: types.StringValue(""), PurgeOnNoConsumers: types.BoolValue(false), RingSize: types.Int64Value(-1),
		Enabled: types.BoolValue(true), AutoDelete: types.BoolValue(false), ForceDestroy: types.BoolValue(false),
	}
}

func TestDroppingUpdateWarnings_NameTheAttributeAndTheFigures(t *testing.T) {
	live := &artemis.QueueInfo{MessageCount: 7, ConsumerCount: 0}
	for _, tc := range []struct {
		name   string
		change func(*queueResourceModel)
		live   *artemis.QueueInfo
		err    error
		attr   string   // "" for no warning
		want   []string // in the detail
	}{
		{"ring below depth", func(m *queueResourceModel) { m.RingSize = types.Int64Value(5) }, live, nil, "ring_size",
			[]string{"ring_size becomes 5", "holds 7 message(s)", "2 stored message(s)", "at least 7"}},
		{"ring at depth", func(m *queueResourceModel) { m.RingSize = types.Int64Value(7) }, live, nil, "", nil},
		{"ring, depth unread", func(m *queueResourceModel) { m.RingSize = types.Int64Value(5) }, nil, errors.New("broker down"), "ring_size",
			[]string{"could not be read at plan (broker down)", "more than 5 messages"}},
		{"ring removed", func(m *queueResourceModel) { m.RingSize = types.Int64Value(-1) }, live, nil, "", nil},
		{"disabled", func(m *queueResourceModel) { m.Enabled = types.BoolValue(false) }, live, nil, "enabled",
			[]string{`address "orders"`, "drops them", "The 7 message(s) it holds stay", "Stop the producers"}},
		{"purge", func(m *queueResourceModel) { m.PurgeOnNoConsumers = types.BoolValue(true) }, live, nil, "purge_on_no_consumers",
			[]string{"deletes the 7 message(s) it holds", "no consumer now"}},
		{"filter", func(m *queueResourceModel) { m.Filter = types.StringValue("color = 'blue'") }, live, nil, "filter",
			[]string{`filter "color = 'blue'"`, "do not match", "The 7 message(s) it holds stay"}},
		{"filter removed", func(m *queueResourceModel) { m.Filter = types.StringValue("") }, live, nil, "", nil},
		{"max consumers", func(m *queueResourceModel) { m.MaxConsumers = types.Int64Value(1) }, live, nil, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, plan := plainQueueModel(), plainQueueModel()
			if tc.name == "filter removed" {
				state.Filter = types.StringValue("color = 'red'")
			}
			if tc.name == "ring removed" {
				state.RingSize = types.Int64Value(3)
			}
			tc.change(&plan)
			diags := droppingUpdateWarnings(state, plan, tc.live, tc.err)
			if tc.attr == "" {
				if len(diags) != 0 {
					t.Fatalf("warnings %v, want none", diags)
				}
				return
			}
			if len(diags) != 1 || len(diags.Warnings()) != 1 {
				t.Fatalf("diagnostics %v, want one warning", diags)
			}
			w := diags.Warnings()[0]
			if p, ok := w.(interface{ Path() path.Path }); !ok || !p.Path().Equal(path.Root(tc.attr)) {
				t.Errorf("warning %q is not on %s", w.Summary(), tc.attr)
			}
			for _, s := range tc.want {
				if !strings.Contains(w.Detail(), s) {
					t.Errorf("detail %q lacks %q", w.Detail(), s)
				}
			}
		})
	}
}

// The plan of in-place updates after which the broker drops messages warns on each attribute,
// with the depth the broker reads.
func TestAccQueueResource_PlanWarnsOfUpdatesThatDropMessages(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range brokerObjectVersions {
		t.Run(broker, func(t *testing.T) {
			logs := traceLogs(t)
			address := testenv.UniqueName("acc.objects.warn")
			queue := address + ".q"
			dropping := `  ring_size             = 2
  enabled               = false
  purge_on_no_consumers = true
  filter                = "color = 'blue'"
  force_destroy         = true`
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: queueConfig(env, broker, address, queue, "  force_destroy = true")},
					{
						PreConfig:          func() { env.Produce(t, broker, artemis.FQQN(address, queue), 5) },
						Config:             queueConfig(env, broker, address, queue, dropping),
						PlanOnly:           true,
						ExpectNonEmptyPlan: true,
					},
				},
			})
			text := strings.ReplaceAll(logs(), `\`, "")
			re := regexp.MustCompile(`Response contains warning diagnostic[^\n]*`)
			warnings := re.FindAllString(text, -1)
			for attr, want := range map[string]string{
				"ring_size":             "ring_size becomes 2 while queue \"" + queue + "\" on broker \"" + broker + "\" holds 5 message(s)",
				"enabled":               "The 5 message(s) it holds stay",
				"purge_on_no_consumers": "It has no consumer now",
				"filter":                "do not match it are no longer stored",
			} {
				found := false
				for _, w := range warnings {
					if strings.Contains(w, fmt.Sprintf("AttributeName(%q)", attr)) && strings.Contains(w, want) {
						found = true
					}
				}
				if !found {
					t.Errorf("no plan warning on %s saying %q; warnings logged: %q", attr, want, warnings)
				}
			}
		})
	}
}
