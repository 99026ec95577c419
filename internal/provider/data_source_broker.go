package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*brokerDataSource)(nil)

// NewBrokerDataSource returns the artemis_broker data source.
func NewBrokerDataSource() datasource.DataSource { return &brokerDataSource{} }

// brokerDataSource reads what a broker says about itself.
type brokerDataSource struct {
	runtime *providerRuntime
}

type brokerDataSourceModel struct {
	Broker           types.String `tfsdk:"broker"`
	ID               types.String `tfsdk:"id"`
	Version          types.String `tfsdk:"version"`
	BrokerName       types.String `tfsdk:"broker_name"`
	NodeID           types.String `tfsdk:"node_id"`
	SecurityEnabled  types.Bool   `tfsdk:"security_enabled"`
	Clustered        types.Bool   `tfsdk:"clustered"`
	IDCacheSize      types.Int64  `tfsdk:"duplicate_id_cache_size"`
	IDCachePersisted types.Bool   `tfsdk:"duplicate_id_cache_persisted"`
}

func (d *brokerDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_broker"
}

func (d *brokerDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the identity of a broker configured in the provider: its version, name and node id, " +
			"whether security is on, and its duplicate-detection cache, which a transfer relies on.",
		Attributes: map[string]schema.Attribute{
			"broker": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The broker's key in the provider's `brokers` map (the name this configuration gives it, not `broker_name`).",
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The broker's node id."},
			"version": schema.StringAttribute{
				Computed: true, MarkdownDescription: "The Artemis version, e.g. `2.40.0`.",
			},
			"broker_name": schema.StringAttribute{
				Computed: true, MarkdownDescription: "The broker's own name (`<name>` in its broker.xml), which its management (JMX) " +
					"object names carry as `broker=\"...\"`: the value the provider's `broker_name` setting gives or discovers. " +
					"Not the key `broker`, which only this configuration knows.",
			},
			"node_id": schema.StringAttribute{
				Computed: true, MarkdownDescription: "The broker's node id, unique within a cluster.",
			},
			"security_enabled": schema.BoolAttribute{
				Computed: true, MarkdownDescription: "Whether the broker checks logins and permissions.",
			},
			"clustered": schema.BoolAttribute{
				Computed: true, MarkdownDescription: "Whether the broker is a node of a cluster.",
			},
			"duplicate_id_cache_size": schema.Int64Attribute{
				Computed: true, MarkdownDescription: "The broker-wide size, in message ids, of each address's duplicate-id cache " +
					"(`id-cache-size` in broker.xml); an address setting may override it, and `artemis_queue`'s " +
					"`address_settings.duplicate_id_cache_size` is the size that applies to a queue. 0 disables duplicate detection.",
			},
			"duplicate_id_cache_persisted": schema.BoolAttribute{
				Computed: true, MarkdownDescription: "Whether the duplicate-id cache survives a broker restart (`persist-id-cache` in broker.xml).",
			},
		},
	}
}

func (d *brokerDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (d *brokerDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx, model, client, ok := modelAndClient[brokerDataSourceModel](ctx, d.runtime, req.Config.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	info, err := client.BrokerInfo(ctx)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("broker"), "Cannot read the broker", err.Error())
		return
	}
	model.ID = types.StringValue(info.NodeID)
	model.Version = types.StringValue(info.Version)
	model.BrokerName = types.StringValue(info.Name)
	model.NodeID = types.StringValue(info.NodeID)
	model.SecurityEnabled = types.BoolValue(info.SecurityEnabled)
	model.Clustered = types.BoolValue(info.Clustered)
	model.IDCacheSize = types.Int64Value(int64(info.IDCacheSize))
	model.IDCachePersisted = types.BoolValue(info.PersistIDCache)
	resp.Diagnostics.Append(resp.State.Set(ctx, model)...)
}
