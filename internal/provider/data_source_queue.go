package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

var _ datasource.DataSourceWithConfigure = (*queueDataSource)(nil)

// NewQueueDataSource returns the artemis_queue data source.
func NewQueueDataSource() datasource.DataSource { return &queueDataSource{} }

// queueDataSource reads a queue and the effective address settings of its address: what decides
// whether a message sent there is kept, paged, blocked, refused or dropped.
type queueDataSource struct {
	runtime *providerRuntime
}

type queueDataSourceModel struct {
	Broker             types.String `tfsdk:"broker"`
	Name               types.String `tfsdk:"name"`
	ID                 types.String `tfsdk:"id"`
	Address            types.String `tfsdk:"address"`
	FQQN               types.String `tfsdk:"fqqn"`
	RoutingType        types.String `tfsdk:"routing_type"`
	Filter             types.String `tfsdk:"filter"`
	Durable            types.Bool   `tfsdk:"durable"`
	Temporary          types.Bool   `tfsdk:"temporary"`
	AutoDelete         types.Bool   `tfsdk:"auto_delete"`
	RingSize           types.Int64  `tfsdk:"ring_size"`
	LastValue          types.Bool   `tfsdk:"last_value"`
	LastValueKey       types.String `tfsdk:"last_value_key"`
	Exclusive          types.Bool   `tfsdk:"exclusive"`
	Paused             types.Bool   `tfsdk:"paused"`
	Enabled            types.Bool   `tfsdk:"enabled"`
	PurgeOnNoConsumers types.Bool   `tfsdk:"purge_on_no_consumers"`
	MaxConsumers       types.Int64  `tfsdk:"max_consumers"`
	MessageCount       types.Int64  `tfsdk:"message_count"`
	ScheduledCount     types.Int64  `tfsdk:"scheduled_count"`
	DeliveringCount    types.Int64  `tfsdk:"delivering_count"`
	ConsumerCount      types.Int64  `tfsdk:"consumer_count"`
	AddressSettings    types.Object `tfsdk:"address_settings"`
}

// addressSettingsAttrTypes are the attributes of address_settings.
var addressSettingsAttrTypes = map[string]attr.Type{
	"address_full_policy":     types.StringType,
	"max_size_bytes":          types.Int64Type,
	"max_size_messages":       types.Int64Type,
	"page_limit_bytes":        types.Int64Type,
	"page_limit_messages":     types.Int64Type,
	"page_full_policy":        types.StringType,
	"dead_letter_address":     types.StringType,
	"expiry_address":          types.StringType,
	"expiry_delay_ms":         types.Int64Type,
	"max_delivery_attempts":   types.Int64Type,
	"redistribution_delay_ms": types.Int64Type,
	"duplicate_id_cache_size": types.Int64Type,
	"page_size_bytes":         types.Int64Type,
	"min_expiry_delay_ms":     types.Int64Type,
	"max_expiry_delay_ms":     types.Int64Type,
	"redelivery_delay_ms":     types.Int64Type,
	"send_to_dla_on_no_route": types.BoolType,
}

func (d *queueDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue"
}

func (d *queueDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	computed := func(desc string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	computedInt := func(desc string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
	}
	computedBool := func(desc string) schema.Attribute {
		return schema.BoolAttribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a queue of a configured broker: its shape, its depth, and the effective address settings " +
			"of its address — what decides whether a message sent there is kept, paged, blocked, refused or dropped. " +
			"Counts are live values read at plan or refresh time.",
		Attributes: map[string]schema.Attribute{
			"broker": schema.StringAttribute{Required: true, MarkdownDescription: "The broker's key in the provider's `brokers` map.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"name": schema.StringAttribute{Required: true, MarkdownDescription: "The queue's name.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"id":           computed("`<broker>/<queue>`."),
			"address":      computed("The address the queue is bound to."),
			"fqqn":         computed("The fully qualified queue name, `address::queue`."),
			"routing_type": computed("`ANYCAST` or `MULTICAST`."),
			"filter":       computed("The queue's filter; messages that do not match it are not routed to the queue. Empty when none."),
			"durable":      computedBool("Whether the queue survives a broker restart."),
			"temporary":    computedBool("Whether the queue is temporary."),
			"auto_delete":  computedBool("Whether the broker deletes the queue when it is empty and has no consumers."),
			"ring_size":    computedInt("The ring size: at most this many messages are kept, the oldest being removed. -1 when not a ring queue."),
			"last_value":   computedBool("Whether the queue keeps only the last message of each last-value key."),
			"last_value_key": computed("The property that groups a last-value queue's messages; empty when the queue names none. " +
				"A queue with a key is a last-value queue even where `last_value` reads `false` (Artemis 2.40)."),
			"exclusive":             computedBool("Whether one consumer at a time receives all messages."),
			"paused":                computedBool("Whether delivery to consumers is paused."),
			"enabled":               computedBool("Whether the queue accepts routed messages."),
			"purge_on_no_consumers": computedBool("Whether the queue discards its messages when it has no consumers."),
			"max_consumers":         computedInt("The maximum number of consumers; -1 for no limit."),
			"message_count":         computedInt("Messages on the queue now, including scheduled, paged and in-delivery ones."),
			"scheduled_count":       computedInt("Scheduled messages on the queue now."),
			"delivering_count":      computedInt("Messages being delivered to consumers now."),
			"consumer_count":        computedInt("Consumers attached now."),
			"address_settings": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The effective address settings of the queue's address (every matching entry merged, broker defaults filled in).",
				Attributes: map[string]schema.Attribute{
					"address_full_policy":   computed("`PAGE`, `BLOCK`, `FAIL` or `DROP`: what happens when the address is full."),
					"max_size_bytes":        computedInt("Bytes in memory before the address is full; -1 means only the broker-wide limit applies."),
					"max_size_messages":     computedInt("Messages in memory before the address is full; -1 for no limit."),
					"page_limit_bytes":      computedInt("Bytes paged before `page_full_policy` applies; -1 for no limit."),
					"page_limit_messages":   computedInt("Messages paged before `page_full_policy` applies; -1 for no limit."),
					"page_full_policy":      computed("`FAIL`, `BLOCK` or `DROP` once the page limit is reached; empty when unset."),
					"dead_letter_address":   computed("Where undeliverable messages go; empty when none."),
					"expiry_address":        computed("Where expired messages go; empty when none."),
					"expiry_delay_ms":       computedInt("Expiry applied to messages without one, in milliseconds (`expiry-delay`); -1 for none."),
					"max_delivery_attempts": computedInt("Deliveries before a message is dead-lettered; -1 or 0 for never."),
					"redistribution_delay_ms": computedInt("Milliseconds before messages move to other cluster nodes when the queue has no consumers " +
						"(`redistribution-delay`); -1 for never."),
					"duplicate_id_cache_size": computedInt("Size, in message ids, of the address's duplicate-id cache (`id-cache-size`): " +
						"the address setting when set, else the broker-wide one (`artemis_broker`'s `duplicate_id_cache_size`). " +
						"0 means duplicate detection is off."),
					"page_size_bytes":         computedInt("Size of each page file, in bytes."),
					"min_expiry_delay_ms":     computedInt("Milliseconds: a shorter expiry is raised to this (`min-expiry-delay`); -1 for none."),
					"max_expiry_delay_ms":     computedInt("Milliseconds: a longer expiry (or none) is cut to this (`max-expiry-delay`); -1 for none."),
					"redelivery_delay_ms":     computedInt("Milliseconds before a message a consumer gave back is delivered again (`redelivery-delay`)."),
					"send_to_dla_on_no_route": computedBool("Whether a message no queue takes goes to the dead-letter address rather than being dropped."),
				},
			},
		},
	}
}

func (d *queueDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (d *queueDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx, model, client, ok := modelAndClient[queueDataSourceModel](ctx, d.runtime, req.Config.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	name := model.Name.ValueString()
	// The data sources of many queues of one broker share one read of its queues.
	q, err := client.Queue(artemis.WithSnapshotReads(ctx, planSnapshotMaxAge), name)
	if errors.Is(err, artemis.ErrNotFound) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Queue not found",
			fmt.Sprintf("%s. Check the queue name (queue names are case-sensitive) and the broker.", err))
		return
	}
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot read the queue", err.Error())
		return
	}
	settings, err := client.AddressSettings(ctx, q.Address)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot read the queue's address settings", err.Error())
		return
	}
	idCache := settings.IDCacheSize
	if idCache == nil {
		info, err := client.BrokerInfo(ctx)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("broker"), "Cannot read the broker", err.Error())
			return
		}
		idCache = &info.IDCacheSize
	}

	model.ID = types.StringValue(model.Broker.ValueString() + "/" + q.Name)
	model.Address = types.StringValue(q.Address)
	model.FQQN = types.StringValue(q.FQQN())
	model.RoutingType = types.StringValue(q.RoutingType)
	model.Filter = types.StringValue(q.Filter)
	model.Durable = types.BoolValue(q.Durable)
	model.Temporary = types.BoolValue(q.Temporary)
	model.AutoDelete = types.BoolValue(q.AutoDelete)
	model.RingSize = types.Int64Value(q.RingSize)
	model.LastValue = types.BoolValue(q.LastValue)
	model.LastValueKey = types.StringValue(q.LastValueKey)
	model.Exclusive = types.BoolValue(q.Exclusive)
	model.Paused = types.BoolValue(q.Paused)
	model.Enabled = types.BoolValue(q.Enabled)
	model.PurgeOnNoConsumers = types.BoolValue(q.PurgeOnNoConsumers)
	model.MaxConsumers = types.Int64Value(int64(q.MaxConsumers))
	model.MessageCount = types.Int64Value(q.MessageCount)
	model.ScheduledCount = types.Int64Value(q.ScheduledCount)
	model.DeliveringCount = types.Int64Value(q.DeliveringCount)
	model.ConsumerCount = types.Int64Value(int64(q.ConsumerCount))
	obj, diags := types.ObjectValue(addressSettingsAttrTypes, map[string]attr.Value{
		"address_full_policy":     types.StringValue(settings.AddressFullPolicy),
		"max_size_bytes":          types.Int64Value(settings.MaxSizeBytes),
		"max_size_messages":       types.Int64Value(settings.MaxSizeMessages),
		"page_limit_bytes":        types.Int64Value(settings.PageLimitBytes),
		"page_limit_messages":     types.Int64Value(settings.PageLimitMessages),
		"page_full_policy":        types.StringValue(settings.PageFullPolicy),
		"dead_letter_address":     types.StringValue(settings.DeadLetterAddress),
		"expiry_address":          types.StringValue(settings.ExpiryAddress),
		"expiry_delay_ms":         types.Int64Value(settings.ExpiryDelay),
		"max_delivery_attempts":   types.Int64Value(int64(settings.MaxDeliveryAttempts)),
		"redistribution_delay_ms": types.Int64Value(settings.RedistributionDelay),
		"duplicate_id_cache_size": types.Int64Value(int64(*idCache)),
		"page_size_bytes":         types.Int64Value(rawSetting(settings.Raw, "pageSizeBytes", 10485760)),
		"min_expiry_delay_ms":     types.Int64Value(settings.MinExpiryDelay),
		"max_expiry_delay_ms":     types.Int64Value(settings.MaxExpiryDelay),
		"redelivery_delay_ms":     types.Int64Value(rawSetting(settings.Raw, "redeliveryDelay", 0)),
		"send_to_dla_on_no_route": types.BoolValue(settings.SendToDLAOnNoRoute),
	})
	resp.Diagnostics.Append(diags...)
	model.AddressSettings = obj
	resp.Diagnostics.Append(resp.State.Set(ctx, model)...)
}
