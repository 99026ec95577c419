package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/provider/validators"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

var _ datasource.DataSourceWithConfigure = (*queuesDataSource)(nil)

// NewQueuesDataSource returns the artemis_queues data source.
func NewQueuesDataSource() datasource.DataSource { return &queuesDataSource{} }

// queuesDataSource lists a broker's queues by name and routing type, so that one configuration
// can move many queues with for_each.
type queuesDataSource struct {
	runtime *providerRuntime
}

type queuesDataSourceModel struct {
	Broker                types.String `tfsdk:"broker"`
	NameRegex             types.String `tfsdk:"name_regex"`
	RoutingType           types.String `tfsdk:"routing_type"`
	IncludeTransferQueues types.Bool   `tfsdk:"include_transfer_queues"`
	ID                    types.String `tfsdk:"id"`
	Names                 types.List   `tfsdk:"names"`
	Queues                types.Map    `tfsdk:"queues"`
}

// listedQueueAttrTypes are the attributes of one entry of queues.
var listedQueueAttrTypes = map[string]attr.Type{
	"name":           types.StringType,
	"address":        types.StringType,
	"fqqn":           types.StringType,
	"routing_type":   types.StringType,
	"durable":        types.BoolType,
	"message_count":  types.Int64Type,
	"consumer_count": types.Int64Type,
	"transfer_queue": types.BoolType,
}

func (d *queuesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queues"
}

func (d *queuesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists the queues of a configured broker whose names match a regular expression, with their depth and " +
			"consumers, so that one configuration can move every queue of a broker with `for_each`. " +
			"The broker's internal queues (cluster store-and-forward queues, `$sys.*`, notification subscriptions) and temporary " +
			"queues are never listed, and the queues of transfers (`" + transfer.StagingPrefix + "*`: staging, manifest, " +
			"quarantine and canary queues) only with `include_transfer_queues`. Values are read at plan or refresh time.",
		Attributes: map[string]schema.Attribute{
			"broker": schema.StringAttribute{Required: true, MarkdownDescription: "The broker's key in the provider's `brokers` map.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"name_regex": schema.StringAttribute{Optional: true, Validators: []validator.String{validators.RE2Pattern()},
				MarkdownDescription: "A regular expression ([RE2 syntax](https://github.com/google/re2/wiki/Syntax), as Terraform's own `regex` " +
					"function) that a queue's name must contain a match of. It is not anchored: `orders` also matches `old.orders.v1`; " +
					"write `^orders$` for one name, `^orders\\\\.` for a prefix (in HCL a backslash is written twice). Default: every queue."},
			"routing_type": schema.StringAttribute{Optional: true,
				MarkdownDescription: "`ANYCAST` or `MULTICAST`: list only queues of that routing type. Default: both.",
				Validators:          []validator.String{stringvalidator.OneOf("ANYCAST", "MULTICAST")}},
			"include_transfer_queues": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "Also list the queues transfers make on a source broker (`" + transfer.StagingPrefix + "*`), " +
					"flagged by `transfer_queue`. A transfer refuses them as source or target. Defaults to `false`."},
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The broker key."},
			"names": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The names of the listed queues, sorted."},
			"queues": schema.MapNestedAttribute{Computed: true,
				MarkdownDescription: "The listed queues, keyed by name, ready for `for_each`.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":           schema.StringAttribute{Computed: true, MarkdownDescription: "The queue's name."},
					"address":        schema.StringAttribute{Computed: true, MarkdownDescription: "The address the queue is bound to."},
					"fqqn":           schema.StringAttribute{Computed: true, MarkdownDescription: "The fully qualified queue name, `address::queue`."},
					"routing_type":   schema.StringAttribute{Computed: true, MarkdownDescription: "`ANYCAST` or `MULTICAST`."},
					"durable":        schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the queue survives a broker restart."},
					"message_count":  schema.Int64Attribute{Computed: true, MarkdownDescription: "Messages on the queue now, including scheduled, paged and in-delivery ones."},
					"consumer_count": schema.Int64Attribute{Computed: true, MarkdownDescription: "Consumers attached now."},
					"transfer_queue": schema.BoolAttribute{Computed: true,
						MarkdownDescription: "Whether the queue is a transfer's own (`" + transfer.StagingPrefix + "*`); only listed with `include_transfer_queues`."},
				}},
			},
		},
	}
}

func (d *queuesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (d *queuesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var model queuesDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var pattern *regexp.Regexp
	if expr := model.NameRegex.ValueString(); expr != "" {
		var err error
		if pattern, err = regexp.Compile(expr); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("name_regex"), "Invalid name_regex",
				fmt.Sprintf("%q is not a regular expression in RE2 syntax: %v. Write a pattern such as \"^orders\\\\.\" (a backslash is written twice in HCL).", expr, err))
			return
		}
	}
	ctx, client := namedBrokerClient(ctx, d.runtime, model.Broker, &resp.Diagnostics)
	if client == nil {
		return
	}
	all, err := client.ListQueues(ctx, "")
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("broker"), "Cannot list the broker's queues",
			err.Error()+"\n\nThe user needs the management permission listQueues (see the broker permissions guide).")
		return
	}
	listed := selectQueues(all, queueSelection{Pattern: pattern, RoutingType: model.RoutingType.ValueString(),
		IncludeTransferQueues: model.IncludeTransferQueues.ValueBool()})

	names := make([]attr.Value, 0, len(listed))
	queues := make(map[string]attr.Value, len(listed))
	for _, q := range listed {
		names = append(names, types.StringValue(q.Name))
		obj, diags := types.ObjectValue(listedQueueAttrTypes, map[string]attr.Value{
			"name":           types.StringValue(q.Name),
			"address":        types.StringValue(q.Address),
			"fqqn":           types.StringValue(artemis.FQQN(q.Address, q.Name)),
			"routing_type":   types.StringValue(q.RoutingType),
			"durable":        types.BoolValue(q.Durable),
			"message_count":  types.Int64Value(q.MessageCount),
			"consumer_count": types.Int64Value(int64(q.ConsumerCount)),
			"transfer_queue": types.BoolValue(isTransferQueue(q.Name)),
		})
		resp.Diagnostics.Append(diags...)
		queues[q.Name] = obj
	}
	nameList, diags := types.ListValue(types.StringType, names)
	resp.Diagnostics.Append(diags...)
	queueMap, diags := types.MapValue(types.ObjectType{AttrTypes: listedQueueAttrTypes}, queues)
	resp.Diagnostics.Append(diags...)
	model.ID = types.StringValue(model.Broker.ValueString())
	model.Names, model.Queues = nameList, queueMap
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}

// queueSelection is what artemis_queues lists of a broker's queues.
type queueSelection struct {
	Pattern               *regexp.Regexp // nil: every name
	RoutingType           string         // "": both
	IncludeTransferQueues bool
}

// selectQueues returns the queues of all that sel lists, in the order of all (ListQueues sorts
// them by name). The broker's internal and temporary queues are never listed: an operator
// moving a broker's queues means the applications' queues.
func selectQueues(all []artemis.QueueSummary, sel queueSelection) []artemis.QueueSummary {
	var out []artemis.QueueSummary
	for _, q := range all {
		switch {
		case q.Internal || q.Temporary:
		case isTransferQueue(q.Name) && !sel.IncludeTransferQueues:
		case sel.RoutingType != "" && !strings.EqualFold(q.RoutingType, sel.RoutingType):
		case sel.Pattern != nil && !sel.Pattern.MatchString(q.Name):
		default:
			out = append(out, q)
		}
	}
	return out
}

// isTransferQueue reports whether a queue is one a transfer makes for itself on its source
// broker: staging, manifest, quarantine or a plan-time canary.
func isTransferQueue(name string) bool { return strings.HasPrefix(name, transfer.StagingPrefix) }
