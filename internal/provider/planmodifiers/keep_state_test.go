package planmodifiers

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A run's result is planned as in state once the run completed, a null included, and left
// unknown while it is unfinished or the resource is being created.
func TestKeepStateWhen_KeepsTheStateOfACompletedRunOnly(t *testing.T) {
	s := schema.Schema{Attributes: map[string]schema.Attribute{
		"status": schema.StringAttribute{Computed: true},
		"queue":  schema.StringAttribute{Computed: true},
	}}
	objType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"status": tftypes.String, "queue": tftypes.String}}
	state := func(status string, queue *string) tfsdk.State {
		q := tftypes.NewValue(tftypes.String, nil)
		if queue != nil {
			q = tftypes.NewValue(tftypes.String, *queue)
		}
		return tfsdk.State{Schema: s, Raw: tftypes.NewValue(objType, map[string]tftypes.Value{
			"status": tftypes.NewValue(tftypes.String, status), "queue": q})}
	}
	plan := tfsdk.Plan{Schema: s, Raw: tftypes.NewValue(objType, map[string]tftypes.Value{
		"status": tftypes.NewValue(tftypes.String, tftypes.UnknownValue), "queue": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)})}
	staging := "studio.transfer.r1"
	for _, tt := range []struct {
		name  string
		state tfsdk.State
		value types.String
		want  types.String
	}{
		{"completed move", state("completed", &staging), types.StringValue(staging), types.StringValue(staging)},
		{"completed copy, null in state", state("completed", nil), types.StringNull(), types.StringNull()},
		{"unfinished run", state("unfinished", &staging), types.StringValue(staging), types.StringUnknown()},
		{"create", tfsdk.State{Schema: s, Raw: tftypes.NewValue(objType, nil)}, types.StringNull(), types.StringUnknown()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := planmodifier.StringRequest{Path: path.Root("queue"), State: tt.state, Plan: plan,
				StateValue: tt.value, PlanValue: types.StringUnknown()}
			resp := planmodifier.StringResponse{PlanValue: req.PlanValue}
			KeepStateWhen(path.Root("status"), "completed").PlanModifyString(context.Background(), req, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatal(resp.Diagnostics)
			}
			if !resp.PlanValue.Equal(tt.want) {
				t.Errorf("planned %s, want %s", resp.PlanValue, tt.want)
			}
		})
	}
}
