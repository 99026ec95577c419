package planmodifiers

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// KeepStateWhen plans a computed value as it is in state, null included, when the prior state's
// string attribute at attr holds value: a completed transfer's counters and times never change
// again, so an edit of its tuning must not show them as "(known after apply)". Unlike the
// framework's UseStateForUnknown it also keeps a null (a copy has no staging queue), and it
// leaves the value unknown while the run is unfinished, when apply does change it.
func KeepStateWhen(attr path.Path, value string) StateKeeper {
	return StateKeeper{attr: attr, value: value}
}

// StateKeeper is the plan modifier KeepStateWhen returns, for string, int64 and float64
// attributes.
type StateKeeper struct {
	attr  path.Path
	value string
}

var (
	_ planmodifier.String  = StateKeeper{}
	_ planmodifier.Int64   = StateKeeper{}
	_ planmodifier.Float64 = StateKeeper{}
)

// Description says what the modifier does, for schema documentation tools.
func (k StateKeeper) Description(context.Context) string {
	return fmt.Sprintf("The value in state is kept when %s is %q.", k.attr, k.value)
}

// MarkdownDescription is Description.
func (k StateKeeper) MarkdownDescription(ctx context.Context) string { return k.Description(ctx) }

// keepsAt is keeps for the attribute at p, its error an attribute error there.
func (k StateKeeper) keepsAt(ctx context.Context, state tfsdk.State, plan tfsdk.Plan, planned interface{ IsUnknown() bool }, p path.Path, diags *diag.Diagnostics) bool {
	keep, err := k.keeps(ctx, state, plan, planned)
	if err != nil {
		diags.AddAttributeError(p, "Cannot plan "+p.String(), err.Error())
	}
	return keep
}

// keeps reports whether a planned value that is still unknown takes the state's value: the
// resource stays (prior state and plan both exist) and the prior state says the run is done.
func (k StateKeeper) keeps(ctx context.Context, state tfsdk.State, plan tfsdk.Plan, planned interface{ IsUnknown() bool }) (bool, error) {
	if state.Raw.IsNull() || plan.Raw.IsNull() || !planned.IsUnknown() {
		return false, nil
	}
	var status types.String
	if diags := state.GetAttribute(ctx, k.attr, &status); diags.HasError() {
		return false, fmt.Errorf("reading %s from state: %v", k.attr, diags)
	}
	return status.ValueString() == k.value, nil
}

// PlanModifyString keeps a string attribute.
func (k StateKeeper) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if k.keepsAt(ctx, req.State, req.Plan, req.PlanValue, req.Path, &resp.Diagnostics) {
		resp.PlanValue = req.StateValue
	}
}

// PlanModifyInt64 keeps an int64 attribute.
func (k StateKeeper) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if k.keepsAt(ctx, req.State, req.Plan, req.PlanValue, req.Path, &resp.Diagnostics) {
		resp.PlanValue = req.StateValue
	}
}

// PlanModifyFloat64 keeps a float64 attribute.
func (k StateKeeper) PlanModifyFloat64(ctx context.Context, req planmodifier.Float64Request, resp *planmodifier.Float64Response) {
	if k.keepsAt(ctx, req.State, req.Plan, req.PlanValue, req.Path, &resp.Diagnostics) {
		resp.PlanValue = req.StateValue
	}
}
