package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

var (
	_ resource.ResourceWithConfigure      = (*queueResource)(nil)
	_ resource.ResourceWithImportState    = (*queueResource)(nil)
	_ resource.ResourceWithValidateConfig = (*queueResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*queueResource)(nil)
)

// NewQueueResource returns the artemis_queue resource.
func NewQueueResource() resource.Resource { return &queueResource{} }

// queueResource declares a queue on a broker through its management API.
type queueResource struct {
	runtime *providerRuntime
}

func (r *queueResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue"
}

func (r *queueResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	replaceBool := []planmodifier.Bool{boolplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A queue on a broker, made through the broker's management API (Jolokia), with the attributes that " +
			"decide which messages it gets and keeps. Attributes the broker changes in place (`filter`, " +
			"`max_consumers`, `exclusive`, `purge_on_no_consumers`, `ring_size`, `enabled`) are updated with the queue's " +
			"messages kept, and the plan warns of those after which the broker drops messages; the others need a new queue. " +
			"Without `force_destroy`, deleting (or replacing) a queue that holds messages, or that producers send to, is refused: " +
			"the queue's address is blocked (its producers wait for credit) and the queue checked again, by count and listing, before it is deleted, and the address unblocked.",
		Attributes: map[string]schema.Attribute{
			"broker": schema.StringAttribute{Required: true, PlanModifiers: replace,
				MarkdownDescription: "The broker's key in the provider's `brokers` map."},
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				MarkdownDescription: "The queue's name."},
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "`<broker>/<name>`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"address": schema.StringAttribute{Required: true, PlanModifiers: replace,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
				MarkdownDescription: "The address the queue is bound to. The broker creates it (marked auto-created) when it " +
					"does not exist; declare it with `artemis_address` to choose its routing types. Changing it replaces the queue."},
			"routing_type": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("ANYCAST"), PlanModifiers: replace,
				Validators: []validator.String{stringvalidator.OneOf("ANYCAST", "MULTICAST")},
				MarkdownDescription: "`ANYCAST` (default) or `MULTICAST`; the address must have it. Changing it replaces the queue: " +
					"Artemis 2.31 and 2.40 change it in place but keep the queue's management object under the old routing type, " +
					"where it outlives the queue."},
			"durable": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true), PlanModifiers: replaceBool,
				MarkdownDescription: "Whether the queue and its durable messages survive a broker restart. Default `true`. " +
					"Changing it replaces the queue."},
			"filter": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(""),
				MarkdownDescription: "A filter expression; messages that do not match it are not routed to the queue. Default empty: every message. " +
					"Changed in place: the messages the queue holds stay, and the plan warns that messages sent from then on that do not match " +
					"are dropped unless another queue of the address takes them."},
			"max_consumers": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(-1),
				Validators:          []validator.Int64{int64validator.AtLeast(-1)},
				MarkdownDescription: "The most consumers the queue takes; -1 (default) for no limit. Changed in place."},
			"exclusive": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Whether one consumer at a time receives all messages. Default `false`. Changed in place."},
			"last_value": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false), PlanModifiers: replaceBool,
				MarkdownDescription: "Whether the queue keeps only the newest message of each last-value key. Default `false`. " +
					"Must be `true` when `last_value_key` is set. Changing it replaces the queue."},
			"last_value_key": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(""), PlanModifiers: replace,
				MarkdownDescription: "The message property that groups a last-value queue's messages; empty (default): the broker's `_AMQ_LVQ_NAME`. " +
					"Changing it replaces the queue."},
			"purge_on_no_consumers": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Whether the queue discards its messages when its last consumer leaves (and takes none while it has no consumer). " +
					"Default `false`. Changed in place: the broker keeps the messages at the update, and the plan warns that it deletes them " +
					"when the last consumer leaves."},
			"ring_size": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(-1),
				Validators: []validator.Int64{int64validator.AtLeast(-1)},
				MarkdownDescription: "At most this many messages are kept, the oldest being removed; -1 (default): not a ring queue. " +
					"Changed in place; below the queue's depth the plan warns: the broker then removes the oldest message for each one it takes."},
			"enabled": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Whether messages sent to the address are routed to the queue. Default `true`. Changed in place: " +
					"with `false` the messages the queue holds stay, and the plan warns that messages sent then are dropped unless another queue of the address takes them."},
			"auto_delete": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false), PlanModifiers: replaceBool,
				MarkdownDescription: "Whether the broker may delete the queue once its last consumer has gone and it holds no more messages " +
					"than the address settings' auto-delete-queues-message-count. Default `false`. Changing it replaces the queue."},
			"force_destroy": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: forceDestroyDescription("queue") + " Without it a queue that producers send to is refused too, " +
					"and a message stored during the delete's checks keeps the queue."},
		},
	}
}

func (r *queueResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *queueResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config queueResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(config.validate()...)
}

func (r *queueResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	ctx, plan, client, ok := modelAndClient[queueResourceModel](ctx, r.runtime, req.Plan.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	def := plan.definition()
	if _, err := client.Queue(ctx, def.Name); err == nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Queue exists already",
			fmt.Sprintf("Broker %q has a queue %q already. To manage it with this resource, import it: "+
				"terraform import <this resource's address> %s; or choose another name.",
				plan.Broker.ValueString(), def.Name, brokerObjectID(plan.Broker.ValueString(), def.Name)))
		return
	} else if !errors.Is(err, artemis.ErrNotFound) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot read the queue", err.Error())
		return
	}
	if err := client.DeclareQueue(ctx, def); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot create the queue",
			err.Error()+". Check the attribute the broker names; the user needs the createQueue management permission on the broker.")
		return
	}
	plan.ID = types.StringValue(brokerObjectID(plan.Broker.ValueString(), def.Name))
	if gone := r.readInto(ctx, client, plan, &resp.Diagnostics); gone {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Queue vanished after its creation",
			fmt.Sprintf("Queue %q was created on broker %q but is gone already: with auto_delete = true, or an address "+
				"setting that deletes queues, the broker may delete it at once. Apply again, or set auto_delete = false.",
				def.Name, plan.Broker.ValueString()))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *queueResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readBrokerObject(ctx, r.runtime, req, resp, r.readInto)
}

// readInto reads the queue into model and reports whether it is gone from the broker.
func (r *queueResource) readInto(ctx context.Context, client *artemis.Client, model *queueResourceModel, diags *diag.Diagnostics) (gone bool) {
	q, gone, ok := lookUp(ctx, client.Queue, model.Name.ValueString(), "Cannot read the queue", diags)
	if !ok {
		return gone
	}
	model.fromBroker(q)
	return false
}

func (r *queueResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	ctx, plan, client, ok := modelAndClient[queueResourceModel](ctx, r.runtime, req.Plan.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	def := plan.definition()
	if err := client.UpdateQueue(ctx, def); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot update the queue",
			err.Error()+". The queue's messages are kept. The user needs the updateQueue management permission on the broker.")
		return
	}
	want := *plan
	if gone := r.readInto(ctx, client, plan, &resp.Diagnostics); gone {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Queue vanished",
			fmt.Sprintf("Queue %q was deleted on broker %q while it was being updated. Apply again to create it.", def.Name, plan.Broker.ValueString()))
		return
	}
	resp.Diagnostics.Append(want.unapplied(*plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *queueResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx, state, client, ok := modelAndClient[queueResourceModel](ctx, r.runtime, req.State.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	name := state.Name.ValueString()
	var err error
	if state.ForceDestroy.ValueBool() {
		err = client.DeleteQueue(ctx, name)
	} else {
		err = client.DeleteEmptyQueue(ctx, name, r.runtime.queueDeleteHooks)
	}
	var inUse *artemis.QueueInUseError
	switch {
	case err == nil, errors.Is(err, artemis.ErrNotFound):
	case errors.As(err, &inUse):
		refuseDeletingQueueInUse(&resp.Diagnostics, state.Broker.ValueString(), inUse)
	default:
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot delete the queue",
			err.Error()+". The user needs the destroyQueue and updateQueue management permissions on the broker.")
	}
}

// refuseDeletingQueueInUse is the refusal to delete a queue that holds messages or that
// producers send to, with the figures and the ways on.
func refuseDeletingQueueInUse(diags *diag.Diagnostics, broker string, e *artemis.QueueInUseError) {
	what := fmt.Sprintf("queue %q on broker %q", e.Queue, broker)
	if e.Producers == 0 {
		refuseDeletingMessages(diags, what, e.Messages())
		return
	}
	diags.AddAttributeError(path.Root("force_destroy"), "Refusing to delete a queue producers send to",
		fmt.Sprintf("%s holds %d message(s) and has %d producer(s) attached to its address %q or to the queue: messages they send "+
			"while it is deleted would be dropped with it (a change that needs a new queue deletes it too). Nothing was deleted, and the "+
			"queue is kept as it was. Stop the producers and drain the queue (or move its messages elsewhere, for example with "+
			"an artemis_queue_transfer), then apply again; or, to drop them, set force_destroy = true, apply, and then destroy or replace it.",
			what, e.Messages(), e.Producers, e.Address))
}

func (r *queueResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importBrokerObject(ctx, req, resp, "name", "target/orders")
}
