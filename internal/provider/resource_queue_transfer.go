package provider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/provider/planmodifiers"
	"github.com/artemis-studio/terraform-provider-artemis/internal/provider/validators"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

var (
	_ resource.ResourceWithConfigure        = (*queueTransferResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*queueTransferResource)(nil)
	_ resource.ResourceWithImportState      = (*queueTransferResource)(nil)
	_ resource.ResourceWithConfigValidators = (*queueTransferResource)(nil)
)

// NewQueueTransferResource returns the artemis_queue_transfer resource.
func NewQueueTransferResource() resource.Resource { return &queueTransferResource{} }

// queueTransferResource is a one-off transfer of messages between two queues. Its plan runs
// the refusal rules against both brokers; its apply runs the move. The brokers, not Terraform
// state, remember an unfinished run, so an interrupted apply is resumed by the next one.
type queueTransferResource struct {
	runtime *providerRuntime
}

func (r *queueTransferResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue_transfer"
}

func (r *queueTransferResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	// A completed run's results never change again: an edit of its tuning plans them as they are.
	keep := planmodifiers.KeepStateWhen(path.Root("status"), statusCompleted)
	computedString := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), keep}}
	}
	resultString := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc, PlanModifiers: []planmodifier.String{keep}}
	}
	resultInt64 := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: desc, PlanModifiers: []planmodifier.Int64{keep}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Moves messages from a queue on one broker to a queue on another, losing none, and doubling none in a run that this resource " +
			"finishes or returns (only returning an orphaned run without its manifest, with `artemis_transfer_return`, may leave up to " +
			"two batches on both brokers). " +
			"`terraform plan` checks both brokers and refuses a transfer that would lose or misroute messages; " +
			"`terraform apply` stages the selection on the source broker (`studio.transfer.<run_id>`) and relays it over AMQP " +
			"with a duplicate-detection id per message. An interrupted apply loses nothing and taints nothing: the next apply " +
			"of the same configuration resumes the same run. A completed transfer is never run again by a refresh or an edit " +
			"of its tuning; to run it again, change `triggers` (or name it in `replace_triggered_by`, or run `terraform apply -replace`).",
		Attributes: map[string]schema.Attribute{
			"id": computedString("`<source broker>/<run_id>`."),
			"mode": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("move"),
				MarkdownDescription: "`move` (default): the messages leave the source once the target holds them. `copy`: the " +
					"source queue is left untouched (same messages, order and delivery counts) and the target gets an exact copy of " +
					"the selection; a copy needs the provider's `ledger_dsn`, where it records what it copied so that a resumed " +
					"copy neither skips nor doubles a message. See the Copy section below.",
				Validators:    []validator.String{validators.NamedString(stringvalidator.OneOf(string(transfer.ModeMove), string(transfer.ModeCopy)))},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"source": endpointSchema("source"),
			"target": endpointSchema("target"),
			"filter": schema.StringAttribute{Optional: true,
				MarkdownDescription: "Selects the messages to move with a Core filter expression (JMS selector syntax), e.g. " +
					"`region = 'eu' AND priority > 4`. Only messages whose producer timestamp is at or before the run's start " +
					"(`t0`) are taken. Without `filter` and `message_ids` the whole queue, as of `t0`, is moved.",
				Validators: []validator.String{validators.NamedString(
					stringvalidator.LengthAtLeast(1),
					stringvalidator.ConflictsWith(path.MatchRoot("message_ids")),
				)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"message_ids": schema.ListAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Moves exactly these messages, by JMS message id (`JMSMessageID`, `ID:<uuid>`) or AMQP " +
					"`message-id`; an id without the `ID:` prefix gets it, as the broker's `AMQUserID` does. Broker-internal " +
					"message ids are not accepted. Ids not on the queue are ignored.",
				Validators: []validator.List{validators.NamedList(listvalidator.SizeAtLeast(1),
					listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1)))},
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()}},
			"batch_size": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(defaultBatchSize),
				MarkdownDescription: "How many messages the relay sends, and records in the run's journal, as one batch. Up to two " +
					"batches await the target's confirmations at a time, so the target's duplicate-id cache must hold at least " +
					"four times as many ids. " + fmt.Sprintf("Default %d.", defaultBatchSize),
				Validators: []validator.Int64{validators.Int64Range(1, maxBatchSize, defaultBatchSize,
					"The relay never holds more unconfirmed messages than its AMQP credit window, so a larger batch would never fill.")}},
			"staging_chunk_size": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(defaultStagingChunkSize),
				MarkdownDescription: "How many messages one broker-side staging move takes; it keeps each management call far " +
					"inside the broker's one-minute management lock. " + fmt.Sprintf("Default %d.", defaultStagingChunkSize),
				Validators: []validator.Int64{validators.Int64Range(1, maxStagingChunkSize, defaultStagingChunkSize,
					"Each staging move holds the broker's management lock, which times out after a minute.")}},
			"max_in_flight_bytes": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(defaultMaxInFlightBytes),
				MarkdownDescription: "Bounds the bytes of messages held by the provider at once (prefetched from staging and " +
					"awaiting the target's confirmation). The broker is invited to send more only as the sizes of the messages " +
					"received so far allow, each held message counting four times its size (as received, decoded, and encoded " +
					"for the target); a message larger than a quarter of this is relayed alone. The process's peak memory can " +
					"still reach a few times this for large messages, as Go frees memory some time after use. " +
					fmt.Sprintf("Default %d MiB.", defaultMaxInFlightBytes>>20),
				Validators: []validator.Int64{validators.Int64Range(minMaxInFlightBytes, 0, defaultMaxInFlightBytes,
					"Below 1 MiB the relay would hold too few messages to keep a batch in flight.")}},
			"max_messages_per_second": schema.Int64Attribute{Optional: true,
				MarkdownDescription: "Caps the rate at which the relay sends messages to the target, in messages per second, to spare " +
					"the target's consumers and both brokers' other clients a burst. Over any few seconds the average stays at or " +
					"under the cap (at most a tenth of a second's worth goes at once), and a batch holds at most half a second's " +
					"worth, so `batch_size` shrinks under a low cap. Unset: as fast as the brokers allow. Changing it on an " +
					"unfinished run takes effect at the next apply and does not replace the transfer.",
				Validators: []validator.Int64{validators.PositiveRate()}},
			"on_destroy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("return"),
				MarkdownDescription: "What destroying an unfinished run (one adopted by import) does with the messages still " +
					"staged: `return` (default) puts them back on the source queue; `leave` keeps them in the staging queue, where " +
					"`artemis_orphaned_transfers` reports them. A completed transfer is only forgotten.",
				Validators: []validator.String{validators.NamedString(stringvalidator.OneOf("return", "leave"))}},
			"triggers": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Values whose change runs the transfer again: a completed transfer is never run again by " +
					"an apply, so changing any value here replaces it, and the new run takes the source's messages as of its own " +
					"start (a move moves what arrived since the last run; a copy copies the queue again, each message once more). " +
					"Adding `triggers` to a transfer that has none, or removing them, is a change too. " +
					"Replacing forgets the completed run (its messages stay on the target). For example " +
					"`triggers = { wave = \"2\" }`, or a value of another resource, such as the release that refills the queue.",
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()}},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true,
				CreateDescription: "How long an apply may run a new transfer before it stops, leaving the rest for the next apply, " +
					"which resumes it. " + fmt.Sprintf("Default `%s`.", timeoutText(defaultCreateTimeout)),
				UpdateDescription: "How long an apply may run an imported, unfinished run before it stops, leaving the rest for the " +
					"next apply; an edit of a completed transfer runs nothing. " + fmt.Sprintf("Default `%s`.", timeoutText(defaultUpdateTimeout)),
				DeleteDescription: "How long destroying an imported, unfinished move may take to return its staged messages to the " +
					"source (`on_destroy = \"return\"`); what is not returned by then stays staged, and destroying again goes on. " +
					"Destroying a completed transfer only forgets it. " + fmt.Sprintf("Default `%s`.", timeoutText(defaultDeleteTimeout))}),
			"run_id":        computedString("The run's id: a digest of the transfer and its start time."),
			"staging_queue": computedString("A move's staging queue on the source broker, removed when the run completes; null for a copy, which has none."),
			"t0":            computedString("The run's start time (RFC 3339): the selection takes messages produced at or before it."),
			"status":        resultString("`completed`, or `unfinished` for an imported run that apply has not finished yet."),
			"messages_relayed": resultInt64("Messages the target confirmed, over every apply of the run, each counted once (also when a " +
				"broker restart or a lost connection made the relay send it again)."),
			"messages_resent": resultInt64("Copies the apply that completed the run sent again of messages the target had already " +
				"confirmed, because the source broker lost their acknowledgement (a source broker restart, a cut connection). " +
				"The target's duplicate detection dropped them; they are not in `messages_relayed`."),
			"messages_returned": resultInt64("Messages this resource put back on the source queue; always 0 in state. A destroy that returns an unfinished " +
				"run removes the resource from state, so the count it returned is kept only in the ledger " +
				"(`returned` of `artemis_transfer_runs`, with `ledger_dsn`); `artemis_transfer_return` keeps its own `messages_returned`."),
			"messages_remaining": resultInt64("Messages still in the staging queue, as last read."),
			"finished_at":        resultString("When the run completed (RFC 3339)."),
			"duration_seconds": schema.Float64Attribute{Computed: true, PlanModifiers: []planmodifier.Float64{keep},
				MarkdownDescription: "How long the apply that completed the run worked on it, in seconds (not counting earlier, " +
					"interrupted applies of the same run: `t0` and `finished_at` span those)."},
		},
	}
}

// endpointSchema is the schema of the source or target object; role names it.
func endpointSchema(role string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Required:            true,
		MarkdownDescription: "The " + role + " queue. Changing it replaces the transfer.",
		PlanModifiers:       []planmodifier.Object{objectplanmodifier.RequiresReplace()},
		Attributes: map[string]schema.Attribute{
			"broker": schema.StringAttribute{Required: true, MarkdownDescription: "The broker's key in the provider's `brokers` map.",
				Validators: []validator.String{validators.NamedString(stringvalidator.LengthAtLeast(1))}},
			"queue": schema.StringAttribute{Required: true, MarkdownDescription: "The queue's name.",
				Validators: []validator.String{validators.NamedString(stringvalidator.LengthAtLeast(1)), validators.NotRunQueue()}},
			"address": schema.StringAttribute{Optional: true, MarkdownDescription: "The queue's address, when you want it checked; " +
				"by default the queue's own address is looked up."},
		},
	}
}

func (r *queueTransferResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

// ConfigValidators refuses a transfer into its own source queue, named by the same broker key.
// (Two keys that reach the same broker node are found by the plan's preflight.)
func (r *queueTransferResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{validators.DifferentQueues()}
}

// ModifyPlan is the preflight: on create it reads both brokers and refuses, on the attribute at
// fault, a transfer that would lose or misroute messages; it warns about what a reviewer should
// know. Live numbers go into diagnostics, never into planned values, since the plan is checked
// again at apply time.
func (r *queueTransferResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.runtime == nil {
		return
	}
	ctx = artemis.WithSnapshotReads(r.runtime.MaskSecrets(ctx), planSnapshotMaxAge)
	if req.Plan.Raw.IsNull() {
		r.planDestroy(ctx, req, resp)
		return
	}
	var plan queueTransferModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		var state queueTransferModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if state.Status.ValueString() == statusUnfinished {
			// An adopted run: apply resumes it, in place.
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringValue(statusCompleted))...)
			for _, attr := range []string{"messages_relayed", "messages_resent", "messages_remaining"} {
				resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(attr), types.Int64Unknown())...)
			}
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("finished_at"), types.StringUnknown())...)
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("duration_seconds"), types.Float64Unknown())...)
			resp.Diagnostics.AddWarning("Apply resumes an unfinished run", resumeWarning(state))
			// The rest of an imported run meets the rules of a new one: the target may have
			// changed since the run began.
			r.preflight(ctx, &plan, resp)
		}
		return
	}
	if r.runtime.Unknown() || !plan.known() {
		resp.Diagnostics.AddWarning("Transfer not checked yet",
			"Some provider or resource values are known only after apply, so the brokers were not checked at plan time. "+
				"Apply checks them before moving anything.")
		return
	}
	r.preflight(ctx, &plan, resp)
}

// Create runs the transfer. When it cannot finish (interrupted, timed out, a broker gone for
// too long) it returns an error and no state: nothing is tainted, and the next apply of the same
// configuration finds the run on the source broker and resumes it.
func (r *queueTransferResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan queueTransferModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.runtime == nil {
		resp.Diagnostics.AddError("Provider not configured", "The artemis provider has no configuration.")
		return
	}
	ctx = r.runtime.MaskSecrets(ctx)
	timeout, diags := plan.Timeouts.Create(ctx, defaultCreateTimeout)
	resp.Diagnostics.Append(diags...)
	res, ok := r.run(ctx, &plan, timeout, &resp.Diagnostics, func(ctx context.Context, e *transfer.Engine, spec transfer.Spec) (transfer.Result, error) {
		return e.Run(ctx, spec) // resumes the unfinished run of spec, move or copy, or starts one
	})
	if !ok {
		return
	}
	completed(&plan, res)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Read keeps a completed transfer as it is: its queues are gone by design, and nothing about the
// brokers can make it un-happen. For an unfinished (imported) run it reads the run through the
// engine: a move's from the source broker, a copy's from the ledger.
func (r *queueTransferResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state queueTransferModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || state.Status.ValueString() == statusCompleted || r.runtime == nil {
		return
	}
	ctx = r.runtime.MaskSecrets(ctx)
	if state.Mode.ValueString() == string(transfer.ModeCopy) {
		r.readCopy(ctx, &state, resp)
		return
	}
	src := brokerClient(r.runtime, state.Source.Broker.ValueString(), path.Root("source").AtName("broker"), &resp.Diagnostics)
	if src == nil {
		return
	}
	e := &transfer.Engine{Source: src}
	run, err := e.UnfinishedRun(ctx, state.RunID.ValueString(), transfer.ModeMove)
	if errors.Is(err, transfer.ErrNoSuchRun) {
		// The run finished or was returned elsewhere.
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the transfer's run", err.Error()+"\n\n"+
			nextStep(err, stoppedRun{RunID: state.RunID.ValueString(), SourceBroker: state.Source.Broker.ValueString(), Copy: state.Mode.ValueString() == string(transfer.ModeCopy)}))
		return
	}
	if run.ManifestError != nil {
		// The next apply rebuilds a lost manifest from the run id (it holds the run's key and
		// t0) and resumes the run, or removes a run that staged nothing and starts again, so
		// the state stays as it is and the plan can go on.
		resp.Diagnostics.AddWarning("Run without a manifest", noManifestWarning(run, state.Source.Broker.ValueString()))
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}
	adopt(&state, run)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update resumes an adopted run; any other change (tuning, on_destroy, timeouts) is recorded
// without running anything, so a completed transfer is never run again by an edit.
func (r *queueTransferResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state queueTransferModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if state.Status.ValueString() != statusUnfinished {
		for _, keep := range []struct{ plan, state *types.String }{{&plan.ID, &state.ID}, {&plan.RunID, &state.RunID},
			{&plan.StagingQueue, &state.StagingQueue}, {&plan.T0, &state.T0}, {&plan.Status, &state.Status}, {&plan.FinishedAt, &state.FinishedAt}} {
			*keep.plan = *keep.state
		}
		plan.MessagesRelayed, plan.MessagesResent = state.MessagesRelayed, state.MessagesResent
		plan.MessagesReturned, plan.MessagesRemaining = state.MessagesReturned, state.MessagesRemaining
		plan.DurationSeconds = state.DurationSeconds
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	ctx = r.runtime.MaskSecrets(ctx)
	timeout, diags := plan.Timeouts.Update(ctx, defaultUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	res, ok := r.run(ctx, &plan, timeout, &resp.Diagnostics, func(ctx context.Context, e *transfer.Engine, spec transfer.Spec) (transfer.Result, error) {
		return e.Resume(ctx, state.RunID.ValueString(), &spec)
	})
	if !ok {
		return // the prior state stays: still unfinished, not tainted
	}
	completed(&plan, res)
	plan.ID = state.ID
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete forgets a completed transfer; its messages stay on the target. An unfinished move is
// returned to its source, or left staged, as on_destroy says; an unfinished copy is abandoned.
func (r *queueTransferResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state queueTransferModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || state.Status.ValueString() != statusUnfinished {
		return
	}
	if state.Mode.ValueString() == string(transfer.ModeCopy) {
		r.abandonCopy(r.runtime.MaskSecrets(ctx), &state, &resp.Diagnostics)
		return
	}
	if state.OnDestroy.ValueString() == "leave" {
		resp.Diagnostics.AddWarning("Staged messages left in place",
			fmt.Sprintf("Run %s keeps its messages in staging queue %s on broker %q; artemis_orphaned_transfers reports it, and an import adopts it again.",
				state.RunID.ValueString(), state.StagingQueue.ValueString(), state.Source.Broker.ValueString()))
		return
	}
	ctx = r.runtime.MaskSecrets(ctx)
	timeout, diags := state.Timeouts.Delete(ctx, defaultDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	e := r.engine(ctx, &state, true, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || e == nil {
		return
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := e.Return(runCtx, state.RunID.ValueString()); err != nil {
		resp.Diagnostics.AddError("Could not return the staged messages; none was lost",
			err.Error()+"\n\nThe transfer stays in state; run terraform destroy again.")
	}
}

// ImportState adopts a run by "<source broker>/<run id>": a run started elsewhere, or one
// whose apply was interrupted and whose configuration is gone; a copy from the ledger. Apply
// then resumes it, destroy returns (a move) or abandons (a copy) it.
func (r *queueTransferResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	broker, runID, ok := strings.Cut(req.ID, "/")
	if !ok || broker == "" {
		resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("%q: expected <source broker>/<run id>, e.g. dc1/3f2a9c01b7de-m4x9k2", req.ID))
		return
	}
	if _, _, err := transfer.ParseRunID(runID); err != nil {
		resp.Diagnostics.AddError("Invalid import id", err.Error())
		return
	}
	m := queueTransferModel{
		ID: types.StringValue(req.ID), RunID: types.StringValue(runID), Status: types.StringValue(statusUnfinished),
		Source:           &endpointModel{Broker: types.StringValue(broker), Address: types.StringNull()},
		Target:           &endpointModel{Broker: types.StringNull(), Address: types.StringNull()},
		MessagesRelayed:  types.Int64Value(0),
		MessagesResent:   types.Int64Value(0),
		MessagesReturned: types.Int64Value(0),
		Timeouts:         timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes(ctx))},
	}
	if r.runtime != nil {
		ctx = r.runtime.MaskSecrets(ctx)
		src := brokerClient(r.runtime, broker, path.Root("id"), &resp.Diagnostics)
		if src == nil {
			return
		}
		run, err := (&transfer.Engine{Source: src}).UnfinishedRun(ctx, runID, transfer.ModeMove)
		switch {
		case errors.Is(err, transfer.ErrNoSuchRun), err == nil && run.ManifestError != nil:
			if r.importCopy(ctx, broker, runID, &m, &resp.Diagnostics) { // an unfinished copy, from the ledger
				resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
				return
			}
			if resp.Diagnostics.HasError() {
				return
			}
			resp.Diagnostics.AddError("No such unfinished run",
				fmt.Sprintf("Broker %q has no staging queue %s with a manifest, and the transfer ledger no unfinished copy %s; "+
					"artemis_orphaned_transfers lists the moves there and artemis_transfer_runs the copies. Import an unfinished run by its id.",
					broker, transfer.StagingQueue(runID), runID))
			return
		case err != nil:
			resp.Diagnostics.AddError("Cannot read the run", err.Error()+"\n\nNext: once broker "+strconv.Quote(broker)+
				" answers, run terraform import again with the same id; nothing was changed.")
			return
		}
		adopt(&m, run)
		m.Target.Broker = types.StringValue(run.Spec.Target.Broker)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
