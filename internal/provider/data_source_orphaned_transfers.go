package provider

import (
	"context"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

var _ datasource.DataSourceWithConfigure = (*orphanedTransfersDataSource)(nil)

// NewOrphanedTransfersDataSource returns the artemis_orphaned_transfers data source.
func NewOrphanedTransfersDataSource() datasource.DataSource { return &orphanedTransfersDataSource{} }

// orphanedTransfersDataSource lists staging queues no process works on: runs that died with
// nobody to resume them. Their messages wait there until adopted or returned.
type orphanedTransfersDataSource struct {
	runtime *providerRuntime
}

type orphanedTransfersModel struct {
	Brokers   types.List `tfsdk:"brokers"`
	Transfers types.List `tfsdk:"transfers"`
}

var orphanAttrTypes = map[string]attr.Type{
	"broker":            types.StringType,
	"run_id":            types.StringType,
	"import_id":         types.StringType,
	"staging_queue":     types.StringType,
	"message_count":     types.Int64Type,
	"quarantined_count": types.Int64Type,
	"t0":                types.StringType,
	"age_seconds":       types.Int64Type,
	"source_queue":      types.StringType,
	"source_address":    types.StringType,
	"target_broker":     types.StringType,
	"target_queue":      types.StringType,
	"has_manifest":      types.BoolType,
}

func (d *orphanedTransfersDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_orphaned_transfers"
}

func (d *orphanedTransfersDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(desc string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	num := func(desc string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists transfer runs that died with nobody to resume them: staging queues (`studio.transfer.<run_id>`) " +
			"that no process relays from and no process holds. A run being staged or relayed right now is not listed. " +
			"Adopt one with `terraform import artemis_queue_transfer.<name> <import_id>` (apply resumes it, destroy returns it), " +
			"or return it to its source with `artemis_transfer_return`.",
		Attributes: map[string]schema.Attribute{
			"brokers": schema.ListAttribute{Optional: true, ElementType: types.StringType,
				Validators:          []validator.List{listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1)), listvalidator.UniqueValues()},
				MarkdownDescription: "The brokers to look at, by their keys in the provider's `brokers` map. Default: all of them."},
			"transfers": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The orphaned runs, oldest first per broker.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"broker":            str("The key, in the provider's `brokers` map, of the broker holding the staging queue (the run's source)."),
					"run_id":            str("The run's id."),
					"import_id":         str("`<broker>/<run_id>`, to adopt the run with `terraform import`."),
					"staging_queue":     str("The staging queue."),
					"message_count":     num("Messages in the staging queue."),
					"quarantined_count": num("Messages the broker could not convert for the relay, parked in `<staging_queue>.quarantine`."),
					"t0":                str("The run's start time (RFC 3339)."),
					"age_seconds":       num("Seconds since the run started."),
					"source_queue":      str("Where the staged messages came from: the run's manifest, or what the broker recorded on the first staged message."),
					"source_address":    str("The source queue's address."),
					"target_broker":     str("The target broker's key in the `brokers` map of the configuration that started the run, as its manifest records it; empty without a manifest."),
					"target_queue":      str("The target queue, from the manifest; empty without one."),
					"has_manifest":      schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the run's manifest survives; without it a return uses only what the broker holds."},
				}},
			},
		},
	}
}

func (d *orphanedTransfersDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (d *orphanedTransfersDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var model orphanedTransfersModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	if resp.Diagnostics.HasError() || d.runtime == nil {
		return
	}
	ctx = d.runtime.MaskSecrets(ctx)
	names := d.runtime.Names()
	if !model.Brokers.IsNull() {
		names = nil
		resp.Diagnostics.Append(model.Brokers.ElementsAs(ctx, &names, false)...)
	}
	sort.Strings(names)
	var rows []attr.Value
	now := time.Now()
	for _, name := range names {
		c := brokerClient(d.runtime, name, path.Root("brokers"), &resp.Diagnostics)
		if c == nil {
			return
		}
		orphans, err := (&transfer.Engine{Source: c}).Orphans(ctx)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("brokers"), "Cannot list orphaned transfers", err.Error())
			return
		}
		for _, o := range orphans {
			targetBroker, targetQueue := "", ""
			if o.Manifest != nil {
				targetBroker, targetQueue = o.Manifest.Spec.Target.Broker, o.Manifest.Spec.Target.Queue
			}
			row, diags := types.ObjectValue(orphanAttrTypes, map[string]attr.Value{
				"broker": types.StringValue(name), "run_id": types.StringValue(o.RunID),
				"import_id": types.StringValue(name + "/" + o.RunID), "staging_queue": types.StringValue(o.StagingQueue),
				"message_count": types.Int64Value(o.Messages), "quarantined_count": types.Int64Value(o.Quarantined),
				"t0": types.StringValue(o.T0.UTC().Format(time.RFC3339Nano)), "age_seconds": types.Int64Value(int64(now.Sub(o.T0).Seconds())),
				"source_queue": types.StringValue(o.SourceQueue), "source_address": types.StringValue(o.SourceAddress),
				"target_broker": types.StringValue(targetBroker), "target_queue": types.StringValue(targetQueue),
				"has_manifest": types.BoolValue(o.Manifest != nil),
			})
			resp.Diagnostics.Append(diags...)
			rows = append(rows, row)
		}
	}
	list, diags := types.ListValue(types.ObjectType{AttrTypes: orphanAttrTypes}, rows)
	resp.Diagnostics.Append(diags...)
	model.Transfers = list
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}
