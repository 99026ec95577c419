package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

var (
	_ resource.ResourceWithConfigure   = (*addressResource)(nil)
	_ resource.ResourceWithImportState = (*addressResource)(nil)
)

// NewAddressResource returns the artemis_address resource.
func NewAddressResource() resource.Resource { return &addressResource{} }

// addressResource declares an address on a broker through its management API.
type addressResource struct {
	runtime *providerRuntime
}

type addressResourceModel struct {
	Broker       types.String `tfsdk:"broker"`
	Name         types.String `tfsdk:"name"`
	ID           types.String `tfsdk:"id"`
	RoutingTypes types.Set    `tfsdk:"routing_types"`
	ForceDestroy types.Bool   `tfsdk:"force_destroy"`
}

func (r *addressResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_address"
}

func (r *addressResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An address on a broker, made through the broker's management API (Jolokia). " +
			"The broker keeps it across restarts, but not in broker.xml: an address that broker.xml also declares is the file's " +
			"to change at the next restart or reload.",
		Attributes: map[string]schema.Attribute{
			"broker": schema.StringAttribute{
				Required: true, MarkdownDescription: "The broker's key in the provider's `brokers` map.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				Required: true, MarkdownDescription: "The address's name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"id": schema.StringAttribute{
				Computed: true, MarkdownDescription: "`<broker>/<name>`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"routing_types": schema.SetAttribute{
				Required: true, ElementType: types.StringType,
				MarkdownDescription: "`ANYCAST`, `MULTICAST` or both: the kinds of queue the address may have. Changed in place; " +
					"the broker refuses to take away a routing type one of the address's queues uses.",
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(stringvalidator.OneOf("ANYCAST", "MULTICAST")),
				},
			},
			"force_destroy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: forceDestroyDescription("address") + " With `true` the address's queues are deleted with it, " +
					"also those Terraform does not manage; without it a destroy of an address that still has queues is refused.",
			},
		},
	}
}

func (r *addressResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *addressResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	ctx, plan, client, ok := modelAndClient[addressResourceModel](ctx, r.runtime, req.Plan.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	name := plan.Name.ValueString()
	routing := sortedRoutingTypes(stringsFromSet(ctx, plan.RoutingTypes, &resp.Diagnostics))
	if resp.Diagnostics.HasError() {
		return
	}
	if _, err := client.Address(ctx, name); err == nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Address exists already",
			fmt.Sprintf("Broker %q has an address %q already. To manage it with this resource, import it: "+
				"terraform import <this resource's address> %s; or choose another name.",
				plan.Broker.ValueString(), name, brokerObjectID(plan.Broker.ValueString(), name)))
		return
	} else if !errors.Is(err, artemis.ErrNotFound) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot read the address", err.Error())
		return
	}
	if err := client.CreateAddress(ctx, name, routing); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot create the address",
			err.Error()+". The user needs the createAddress management permission on the broker.")
		return
	}
	plan.ID = types.StringValue(brokerObjectID(plan.Broker.ValueString(), name))
	r.readInto(ctx, client, plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *addressResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readBrokerObject(ctx, r.runtime, req, resp, r.readInto)
}

// readInto reads the address into model and reports whether it is gone from the broker.
func (r *addressResource) readInto(ctx context.Context, client *artemis.Client, model *addressResourceModel, diags *diag.Diagnostics) (gone bool) {
	a, gone, ok := lookUp(ctx, client.Address, model.Name.ValueString(), "Cannot read the address", diags)
	if !ok {
		return gone
	}
	set, d := types.SetValueFrom(ctx, types.StringType, a.RoutingTypes)
	diags.Append(d...)
	model.RoutingTypes = set
	if model.ID.IsNull() || model.ID.IsUnknown() {
		model.ID = types.StringValue(brokerObjectID(model.Broker.ValueString(), model.Name.ValueString()))
	}
	if model.ForceDestroy.IsNull() {
		model.ForceDestroy = types.BoolValue(false)
	}
	return false
}

func (r *addressResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state addressResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, client := namedBrokerClient(ctx, r.runtime, plan.Broker, &resp.Diagnostics)
	if client == nil {
		return
	}
	if !plan.RoutingTypes.Equal(state.RoutingTypes) {
		routing := sortedRoutingTypes(stringsFromSet(ctx, plan.RoutingTypes, &resp.Diagnostics))
		if resp.Diagnostics.HasError() {
			return
		}
		if err := client.UpdateAddressRoutingTypes(ctx, plan.Name.ValueString(), routing); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("routing_types"), "Cannot change the address's routing types",
				err.Error()+". Keep every routing type the address's queues use (see their routing_type), "+
					"or change those queues first; the user needs the updateAddress management permission.")
			return
		}
	}
	if gone := r.readInto(ctx, client, &plan, &resp.Diagnostics); gone {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Address vanished",
			fmt.Sprintf("Address %q was deleted on broker %q while it was being updated. Apply again to create it.",
				plan.Name.ValueString(), plan.Broker.ValueString()))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *addressResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx, state, client, ok := modelAndClient[addressResourceModel](ctx, r.runtime, req.State.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	name := state.Name.ValueString()
	a, _, ok := lookUp(ctx, client.Address, name, "Cannot read the address before deleting it", &resp.Diagnostics)
	if !ok {
		return
	}
	force := state.ForceDestroy.ValueBool()
	if !force && a.Messages > 0 {
		refuseDeletingMessages(&resp.Diagnostics, fmt.Sprintf("address %q on broker %q (queues %s)", name, state.Broker.ValueString(),
			strings.Join(a.QueueNames, ", ")), a.Messages)
		return
	}
	if !force && len(a.QueueNames) > 0 {
		resp.Diagnostics.AddAttributeError(path.Root("force_destroy"), "Address still has queues",
			fmt.Sprintf("Address %q on broker %q has queues %s (empty now), which deleting it would delete too. Nothing was deleted. "+
				"Delete those queues first, or set force_destroy = true, apply, and destroy again.",
				name, state.Broker.ValueString(), strings.Join(a.QueueNames, ", ")))
		return
	}
	if err := client.DeleteAddress(ctx, name, force); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot delete the address",
			err.Error()+". The user needs the deleteAddress management permission on the broker.")
	}
}

func (r *addressResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importBrokerObject(ctx, req, resp, "name", "target/orders")
}

// sortedRoutingTypes gives routing types in one order, so the broker is asked the same way
// whatever order the configuration's set comes in.
func sortedRoutingTypes(routing []string) []string {
	out := append([]string(nil), routing...)
	sort.Strings(out)
	return out
}
