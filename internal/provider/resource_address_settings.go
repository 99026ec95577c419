package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

var (
	_ resource.ResourceWithConfigure   = (*addressSettingsResource)(nil)
	_ resource.ResourceWithImportState = (*addressSettingsResource)(nil)
)

// NewAddressSettingsResource returns the artemis_address_settings resource.
func NewAddressSettingsResource() resource.Resource { return &addressSettingsResource{} }

// addressSettingsResource declares the address-settings entry for one match through the
// broker's management API. Its attributes are each optional: the entry sets those given, and
// the rest fall through to less specific matches and the broker's defaults.
type addressSettingsResource struct {
	runtime *providerRuntime
}

// settingsState is what a plan, a state and a configuration share for reading and writing one
// attribute by its path.
type settingsState interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}

func (r *addressSettingsResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_address_settings"
}

func (r *addressSettingsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	attrs := map[string]schema.Attribute{
		"broker": schema.StringAttribute{Required: true, PlanModifiers: replace,
			MarkdownDescription: "The broker's key in the provider's `brokers` map."},
		"match": schema.StringAttribute{Required: true, PlanModifiers: replace,
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			MarkdownDescription: "The address match the entry applies to: an address, or a pattern in the broker's wildcard syntax " +
				"(`.` between words, `*` one word, `#` any number), e.g. `orders.#`."},
		"id": schema.StringAttribute{Computed: true, MarkdownDescription: "`<broker>/<match>`.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
	}
	for _, s := range addressSettings {
		desc := s.description + " Unset: a less specific match's value, else the broker's default."
		switch s.kind {
		case settingString:
			a := schema.StringAttribute{Optional: true, MarkdownDescription: desc}
			switch s.attribute {
			case "address_full_policy":
				a.Validators = []validator.String{stringvalidator.OneOf(addressSettingsPolicies...)}
			case "page_full_policy":
				a.Validators = []validator.String{stringvalidator.OneOf("FAIL", "BLOCK", "DROP")}
			}
			attrs[s.attribute] = a
		case settingInt:
			a := schema.Int64Attribute{Optional: true, MarkdownDescription: desc}
			if s.attribute != "max_delivery_attempts" {
				a.Validators = []validator.Int64{int64validator.AtLeast(-1)}
			}
			attrs[s.attribute] = a
		default:
			attrs[s.attribute] = schema.BoolAttribute{Optional: true, MarkdownDescription: desc}
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The address-settings entry for one match, made through the broker's management API (Jolokia): " +
			"the settings that decide whether an address keeps what it is sent — full policy, sizes and paging limits, " +
			"dead-letter and expiry addresses, expiry delays, redelivery and the duplicate-id cache. " +
			"Each attribute is optional; the entry sets those given, and the rest fall through to less specific matches " +
			"and the broker's defaults. The broker keeps the entry in its journal across restarts, but not in broker.xml.",
		Attributes: attrs,
	}
}

func (r *addressSettingsResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *addressSettingsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
	r.write(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

func (r *addressSettingsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
	r.write(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

// write sends the planned entry and reads it back into state.
func (r *addressSettingsResource) write(ctx context.Context, plan settingsState, state stateSetter, diags *diag.Diagnostics) {
	var broker, match types.String
	diags.Append(plan.GetAttribute(ctx, path.Root("broker"), &broker)...)
	diags.Append(plan.GetAttribute(ctx, path.Root("match"), &match)...)
	if diags.HasError() {
		return
	}
	ctx, client := namedBrokerClient(ctx, r.runtime, broker, diags)
	if client == nil {
		return
	}
	info, err := client.BrokerInfo(ctx)
	if err != nil {
		diags.AddAttributeError(path.Root("broker"), "Cannot read the broker", err.Error())
		return
	}
	entry := map[string]any{}
	for _, s := range addressSettings {
		v := settingAttribute(ctx, plan, s, diags)
		if v == nil || v.IsNull() {
			continue
		}
		if v.IsUnknown() {
			diags.AddAttributeError(path.Root(s.attribute), "Unknown address setting",
				s.attribute+" is not known at apply time. Give it a value known before apply.")
			continue
		}
		if !artemis.VersionAtLeast(info.Version, 2, 32) {
			if _, ok := artemis.LegacyAddressSettingKey(s.key); !ok {
				diags.AddAttributeError(path.Root(s.attribute), "Address setting needs a newer broker",
					fmt.Sprintf("Broker %q runs Artemis %s, whose management API cannot set %s (it needs 2.32 or later). "+
						"Remove %s from this resource, or set it in the broker's broker.xml.", broker.ValueString(), info.Version, s.attribute, s.attribute))
				continue
			}
		}
		entry[s.key] = settingJSON(v)
	}
	if diags.HasError() {
		return
	}
	if err := client.AddAddressSettings(ctx, match.ValueString(), entry); err != nil {
		diags.AddAttributeError(path.Root("match"), "Cannot set the address settings",
			err.Error()+". Check the setting the broker names (a positive max_size_bytes needs a smaller page_size_bytes); "+
				"the user needs the addAddressSettings management permission on the broker.")
		return
	}
	diags.Append(state.SetAttribute(ctx, path.Root("id"), brokerObjectID(broker.ValueString(), match.ValueString()))...)
	r.readInto(ctx, client, info, match.ValueString(), plan, state, false, diags)
}

// stateSetter is the state a response carries.
type stateSetter interface {
	settingsState
	SetAttribute(ctx context.Context, p path.Path, value any) diag.Diagnostics
}

// settingAttribute reads one setting's attribute.
func settingAttribute(ctx context.Context, from settingsState, s addressSetting, diags *diag.Diagnostics) attr.Value {
	switch s.kind {
	case settingString:
		var v types.String
		diags.Append(from.GetAttribute(ctx, path.Root(s.attribute), &v)...)
		return v
	case settingInt:
		var v types.Int64
		diags.Append(from.GetAttribute(ctx, path.Root(s.attribute), &v)...)
		return v
	default:
		var v types.Bool
		diags.Append(from.GetAttribute(ctx, path.Root(s.attribute), &v)...)
		return v
	}
}

// readInto reads the effective settings of match and sets, in state, each attribute that
// which holds (all of them with every, as after an import: those the broker reports).
func (r *addressSettingsResource) readInto(ctx context.Context, client *artemis.Client, info artemis.BrokerInfo, match string,
	which settingsState, state stateSetter, every bool, diags *diag.Diagnostics,
) {
	current, err := client.AddressSettings(ctx, match)
	if err != nil {
		diags.AddAttributeError(path.Root("match"), "Cannot read the address settings", err.Error())
		return
	}
	for _, s := range addressSettings {
		if !every {
			if v := settingAttribute(ctx, which, s, diags); v == nil || v.IsNull() {
				continue
			}
		}
		legacyKey, _ := artemis.LegacyAddressSettingKey(s.key)
		v, ok, err := settingValue(s, current.Raw, legacyKey)
		if err != nil {
			diags.AddAttributeError(path.Root(s.attribute), "Cannot read the address setting", err.Error())
			continue
		}
		if !ok {
			if every {
				continue
			}
			v = unsetValue(s, info.IDCacheSize)
		}
		diags.Append(state.SetAttribute(ctx, path.Root(s.attribute), v)...)
	}
}

// settingsInState reads the broker and match of the settings in state, and that broker's
// client; the client is nil when either could not be had, diags saying why.
func (r *addressSettingsResource) settingsInState(ctx context.Context, state tfsdk.State, diags *diag.Diagnostics) (context.Context, types.String, types.String, *artemis.Client) {
	var broker, match types.String
	diags.Append(state.GetAttribute(ctx, path.Root("broker"), &broker)...)
	diags.Append(state.GetAttribute(ctx, path.Root("match"), &match)...)
	if diags.HasError() {
		return ctx, broker, match, nil
	}
	ctx, client := namedBrokerClient(ctx, r.runtime, broker, diags)
	return ctx, broker, match, client
}

func (r *addressSettingsResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, broker, match, client := r.settingsInState(ctx, req.State, &resp.Diagnostics)
	if client == nil {
		return
	}
	info, err := client.BrokerInfo(ctx)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("broker"), "Cannot read the broker", err.Error())
		return
	}
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	// Right after an import only broker and match are in state: fill in every setting the broker reports.
	every := id.IsNull() || id.IsUnknown()
	r.readInto(ctx, client, info, match.ValueString(), req.State, &resp.State, every, &resp.Diagnostics)
	if id.IsNull() || id.IsUnknown() {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), brokerObjectID(broker.ValueString(), match.ValueString()))...)
	}
}

func (r *addressSettingsResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx, _, match, client := r.settingsInState(ctx, req.State, &resp.Diagnostics)
	if client == nil {
		return
	}
	if err := client.RemoveAddressSettings(ctx, match.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("match"), "Cannot remove the address settings",
			err.Error()+". The user needs the removeAddressSettings management permission on the broker.")
	}
}

func (r *addressSettingsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	broker, match, ok := strings.Cut(req.ID, "/")
	if !ok || broker == "" || match == "" {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("The import id %q is not `<broker>/<match>`. Give the broker's key in the provider's `brokers` map, a slash, "+
				"and the entry's match, e.g. \"target/orders.#\".", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("broker"), broker)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("match"), match)...)
}
