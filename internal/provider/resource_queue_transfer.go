package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

var (
	_ resource.ResourceWithConfigure   = (*queueTransferResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*queueTransferResource)(nil)
	_ resource.ResourceWithImportState = (*queueTransferResource)(nil)
)

// NewQueueTransferResource returns the artemis_queue_transfer resource.
func NewQueueTransferResource() resource.Resource { return &queueTransferResource{} }

// queueTransferResource is a one-off transfer of messages between two queues. Its plan runs
// the refusal rules against both brokers; its apply runs the move. The brokers, not Terraform
// state, remember an unfinished run, so an interrupted apply is resumed by the next one.
type queueTransferResource struct {
	runtime *providerRuntime
}

// Status values.
const (
	statusCompleted  = "completed"
	statusUnfinished = "unfinished" // an imported run whose staging queue still holds messages
)

// Defaults of the tuning attributes, the engine's own.
const (
	defaultBatchSize        = transfer.DefaultBatchSize
	defaultStagingChunkSize = transfer.DefaultChunkSize
	defaultMaxInFlightBytes = transfer.DefaultMaxInFlightBytes
	defaultCreateTimeout    = 24 * time.Hour
	defaultDeleteTimeout    = time.Hour
)

type queueTransferModel struct {
	ID                types.String   `tfsdk:"id"`
	Mode              types.String   `tfsdk:"mode"`
	Source            *endpointModel `tfsdk:"source"`
	Target            *endpointModel `tfsdk:"target"`
	Filter            types.String   `tfsdk:"filter"`
	MessageIDs        types.List     `tfsdk:"message_ids"`
	BatchSize         types.Int64    `tfsdk:"batch_size"`
	StagingChunkSize  types.Int64    `tfsdk:"staging_chunk_size"`
	MaxInFlightBytes  types.Int64    `tfsdk:"max_in_flight_bytes"`
	MaxMessagesPerSec types.Int64    `tfsdk:"max_messages_per_second"`
	OnDestroy         types.String   `tfsdk:"on_destroy"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
	RunID             types.String   `tfsdk:"run_id"`
	StagingQueue      types.String   `tfsdk:"staging_queue"`
	T0                types.String   `tfsdk:"t0"`
	Status            types.String   `tfsdk:"status"`
	MessagesRelayed   types.Int64    `tfsdk:"messages_relayed"`
	MessagesResent    types.Int64    `tfsdk:"messages_resent"`
	MessagesReturned  types.Int64    `tfsdk:"messages_returned"`
	MessagesRemaining types.Int64    `tfsdk:"messages_remaining"`
	FinishedAt        types.String   `tfsdk:"finished_at"`
	DurationSeconds   types.Float64  `tfsdk:"duration_seconds"`
}

type endpointModel struct {
	Broker  types.String `tfsdk:"broker"`
	Queue   types.String `tfsdk:"queue"`
	Address types.String `tfsdk:"address"`
}

func (r *queueTransferResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue_transfer"
}

func endpointSchema(role string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Required:            true,
		MarkdownDescription: "The " + role + " queue. Changing it replaces the transfer.",
		PlanModifiers:       []planmodifier.Object{objectplanmodifier.RequiresReplace()},
		Attributes: map[string]schema.Attribute{
			"broker": schema.StringAttribute{Required: true, MarkdownDescription: "The broker's key in the provider's `brokers` map.",
				Validators: []validator.String{namedString{[]validator.String{stringvalidator.LengthAtLeast(1)}}}},
			"queue": schema.StringAttribute{Required: true, MarkdownDescription: "The queue's name.",
				Validators: []validator.String{namedString{[]validator.String{stringvalidator.LengthAtLeast(1)}}, notRunQueue{}}},
			"address": schema.StringAttribute{Optional: true, MarkdownDescription: "The queue's address, when you want it checked; " +
				"by default the queue's own address is looked up."},
		},
	}
}

func (r *queueTransferResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computedString := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Moves messages from a queue on one broker to a queue on another, losing and doubling none. " +
			"`terraform plan` checks both brokers and refuses a transfer that would lose or misroute messages; " +
			"`terraform apply` stages the selection on the source broker (`studio.transfer.<run_id>`) and relays it over AMQP " +
			"with a duplicate-detection id per message. An interrupted apply loses nothing and taints nothing: the next apply " +
			"of the same configuration resumes the same run. A completed transfer is never run again by a refresh or an edit " +
			"of its tuning; to run it again, replace it (`terraform apply -replace`).",
		Attributes: map[string]schema.Attribute{
			"id": computedString("`<source broker>/<run_id>`."),
			"mode": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("move"),
				MarkdownDescription: "`move` (default): the messages leave the source once the target holds them. `copy`: the " +
					"source queue is left untouched (same messages, order and delivery counts) and the target gets an exact copy of " +
					"the selection; a copy needs the provider's `ledger_dsn`, where it records what it copied so that a resumed " +
					"copy neither skips nor doubles a message. See the Copy section below.",
				Validators:    []validator.String{namedString{[]validator.String{stringvalidator.OneOf(string(transfer.ModeMove), string(transfer.ModeCopy))}}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"source": endpointSchema("source"),
			"target": endpointSchema("target"),
			"filter": schema.StringAttribute{Optional: true,
				MarkdownDescription: "Selects the messages to move with a Core filter expression (JMS selector syntax), e.g. " +
					"`region = 'eu' AND priority > 4`. Only messages whose producer timestamp is at or before the run's start " +
					"(`t0`) are taken. Without `filter` and `message_ids` the whole queue, as of `t0`, is moved.",
				Validators: []validator.String{namedString{[]validator.String{
					stringvalidator.LengthAtLeast(1),
					stringvalidator.ConflictsWith(path.MatchRoot("message_ids")),
				}}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"message_ids": schema.ListAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Moves exactly these messages, by JMS message id (`JMSMessageID`, `ID:<uuid>`) or AMQP " +
					"`message-id`; an id without the `ID:` prefix gets it, as the broker's `AMQUserID` does. Broker-internal " +
					"message ids are not accepted. Ids not on the queue are ignored.",
				Validators: []validator.List{namedList{[]validator.List{listvalidator.SizeAtLeast(1),
					listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))}}},
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()}},
			"batch_size": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(defaultBatchSize),
				MarkdownDescription: "How many messages the relay sends, and records in the run's journal, as one batch. Up to two " +
					"batches await the target's confirmations at a time, so the target's duplicate-id cache must hold at least " +
					"four times as many ids. Default 500.",
				Validators: []validator.Int64{int64Range{min: 1, max: maxBatchSize, def: defaultBatchSize,
					why: "The relay never holds more unconfirmed messages than its AMQP credit window, so a larger batch would never fill."}}},
			"staging_chunk_size": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(defaultStagingChunkSize),
				MarkdownDescription: "How many messages one broker-side staging move takes; it keeps each management call far " +
					"inside the broker's one-minute management lock. Default 2000.",
				Validators: []validator.Int64{int64Range{min: 1, max: maxStagingChunkSize, def: defaultStagingChunkSize,
					why: "Each staging move holds the broker's management lock, which times out after a minute."}}},
			"max_in_flight_bytes": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(defaultMaxInFlightBytes),
				MarkdownDescription: "Bounds the bytes of messages held by the provider at once (prefetched from staging and " +
					"awaiting the target's confirmation). The broker is invited to send more only as the sizes of the messages " +
					"received so far allow, each held message counting four times its size (as received, decoded, and encoded " +
					"for the target); a message larger than a quarter of this is relayed alone. The process's peak memory can " +
					"still reach a few times this for large messages, as Go frees memory some time after use. Default 32 MiB.",
				Validators: []validator.Int64{int64Range{min: minMaxInFlightBytes, def: defaultMaxInFlightBytes,
					why: "Below 1 MiB the relay would hold too few messages to keep a batch in flight."}}},
			"max_messages_per_second": schema.Int64Attribute{Optional: true,
				MarkdownDescription: "Caps the rate at which the relay sends messages to the target, in messages per second, to spare " +
					"the target's consumers and both brokers' other clients a burst. Over any few seconds the average stays at or " +
					"under the cap (at most a tenth of a second's worth goes at once), and a batch holds at most half a second's " +
					"worth, so `batch_size` shrinks under a low cap. Unset: as fast as the brokers allow. Changing it on an " +
					"unfinished run takes effect at the next apply and does not replace the transfer.",
				Validators: []validator.Int64{positiveRate{}}},
			"on_destroy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("return"),
				MarkdownDescription: "What destroying an unfinished run (one adopted by import) does with the messages still " +
					"staged: `return` puts them back on the source queue; `leave` keeps them in the staging queue, where " +
					"`artemis_orphaned_transfers` reports them. A completed transfer is only forgotten.",
				Validators: []validator.String{namedString{[]validator.String{stringvalidator.OneOf("return", "leave")}}}},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true,
				CreateDescription: "How long an apply may run before it stops, leaving the rest staged for the next apply. Default 24h."}),
			"run_id":        computedString("The run's id: a digest of the transfer and its start time."),
			"staging_queue": computedString("A move's staging queue on the source broker, removed when the run completes; null for a copy, which has none."),
			"t0":            computedString("The run's start time (RFC 3339): the selection takes messages produced at or before it."),
			"status": schema.StringAttribute{Computed: true,
				MarkdownDescription: "`completed`, or `unfinished` for an imported run that apply has not finished yet."},
			"messages_relayed": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "Messages the target confirmed, over every apply of the run, each counted once (also when a " +
					"broker restart or a lost connection made the relay send it again)."},
			"messages_resent": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "Copies the apply that completed the run sent again of messages the target had already " +
					"confirmed, because the source broker lost their acknowledgement (a source broker restart, a cut connection). " +
					"The target's duplicate detection dropped them; they are not in `messages_relayed`."},
			"messages_returned": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "Messages put back on the source (by destroy of an unfinished run)."},
			"messages_remaining": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "Messages still in the staging queue, as last read."},
			"finished_at": schema.StringAttribute{Computed: true, MarkdownDescription: "When the run completed (RFC 3339)."},
			"duration_seconds": schema.Float64Attribute{Computed: true,
				MarkdownDescription: "How long the apply that completed the run worked on it, in seconds (not counting earlier, " +
					"interrupted applies of the same run: `t0` and `finished_at` span those)."},
		},
	}
}

func (r *queueTransferResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

// spec turns the model into the engine's spec.
func (m *queueTransferModel) spec(ctx context.Context) (transfer.Spec, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := transfer.Spec{Mode: transfer.Mode(m.Mode.ValueString())}
	if s.Mode == "" {
		s.Mode = transfer.ModeMove
	}
	if m.Source != nil {
		s.Source = transfer.Endpoint{Broker: m.Source.Broker.ValueString(), Queue: m.Source.Queue.ValueString(), Address: m.Source.Address.ValueString()}
	}
	if m.Target != nil {
		s.Target = transfer.Endpoint{Broker: m.Target.Broker.ValueString(), Queue: m.Target.Queue.ValueString(), Address: m.Target.Address.ValueString()}
	}
	s.Selection.Filter = m.Filter.ValueString()
	if !m.MessageIDs.IsNull() && !m.MessageIDs.IsUnknown() {
		diags.Append(m.MessageIDs.ElementsAs(ctx, &s.Selection.MessageIDs, false)...)
	}
	return s, diags
}

// known reports whether every input of the transfer is known (not computed later in the apply).
func (m *queueTransferModel) known() bool {
	if m.Source == nil || m.Target == nil {
		return false
	}
	for _, v := range []types.String{m.Mode, m.Source.Broker, m.Source.Queue, m.Source.Address, m.Target.Broker, m.Target.Queue, m.Target.Address, m.Filter} {
		if v.IsUnknown() {
			return false
		}
	}
	return !m.MessageIDs.IsUnknown() && !m.BatchSize.IsUnknown()
}

// engine builds the transfer engine for the model's brokers; problems are added to diags on
// the broker attributes.
func (r *queueTransferResource) engine(ctx context.Context, m *queueTransferModel, diags *diag.Diagnostics) *transfer.Engine {
	src := brokerClient(r.runtime, m.Source.Broker.ValueString(), path.Root("source").AtName("broker"), diags)
	tgt := brokerClient(r.runtime, m.Target.Broker.ValueString(), path.Root("target").AtName("broker"), diags)
	if src == nil || tgt == nil {
		return nil
	}
	opts := transfer.Options{
		BatchSize: int(m.BatchSize.ValueInt64()), ChunkSize: int(m.StagingChunkSize.ValueInt64()),
		MaxInFlightBytes: m.MaxInFlightBytes.ValueInt64(), CreatedBy: "terraform-provider-artemis",
		MaxMessagesPerSecond: float64(m.MaxMessagesPerSec.ValueInt64()), Progress: progressLogger(ctx, m),
	}
	book, err := r.runtime.bookkeeper(ctx)
	if err != nil {
		diags.AddError("Cannot use the transfer ledger (ledger_dsn)", err.Error()+
			"\n\nNothing was moved. Check the ledger's PostgreSQL, or unset ledger_dsn to move without a ledger.")
		return nil
	}
	return &transfer.Engine{Source: src, Target: tgt, Options: opts, Bookkeeper: book, DuplicateProbes: &r.runtime.probes, PassedChecks: &r.runtime.checks}
}

// findingPath maps a preflight attribute name to its path in this resource.
func findingPath(attribute string) path.Path {
	p := path.Empty()
	for _, part := range strings.Split(attribute, ".") {
		if p.Equal(path.Empty()) {
			p = path.Root(part)
		} else {
			p = p.AtName(part)
		}
	}
	return p
}

// addFindings turns preflight findings into diagnostics on their attributes. The summary also
// names the attribute, since Terraform cannot point inside an object such as target = {...}
// and shows the resource block instead.
func addFindings(findings []preflight.Finding, diags *diag.Diagnostics) {
	for _, f := range findings {
		summary := f.Summary
		if f.Attribute != "" {
			summary += " (" + f.Attribute + ")"
		}
		switch {
		case f.Severity == preflight.Error && f.Attribute != "":
			diags.AddAttributeError(findingPath(f.Attribute), summary, f.Detail)
		case f.Severity == preflight.Error:
			diags.AddError(f.Summary, f.Detail)
		case f.Attribute != "":
			diags.AddAttributeWarning(findingPath(f.Attribute), summary, f.Detail)
		default:
			diags.AddWarning(f.Summary, f.Detail)
		}
	}
}

// ModifyPlan is the preflight: on create it reads both brokers and refuses, on the attribute at
// fault, a transfer that would lose or misroute messages; it warns about what a reviewer should
// know. Live numbers go into diagnostics, never into planned values, since the plan is checked
// again at apply time.
func (r *queueTransferResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.runtime == nil {
		return
	}
	ctx = r.runtime.MaskSecrets(ctx)
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
			resp.Diagnostics.AddWarning("Apply resumes an unfinished run",
				fmt.Sprintf("Run %s has %d messages in staging queue %s; apply relays them to %s/%s with the run's original start time.",
					state.RunID.ValueString(), state.MessagesRemaining.ValueInt64(), state.StagingQueue.ValueString(),
					state.Target.Broker.ValueString(), state.Target.Queue.ValueString()))
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

// preflight checks the planned transfer against both brokers and reports the findings.
func (r *queueTransferResource) preflight(ctx context.Context, plan *queueTransferModel, resp *resource.ModifyPlanResponse) {
	if r.runtime.Unknown() || !plan.known() {
		return
	}
	spec, diags := plan.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if !addSpecErrors(spec, &resp.Diagnostics) || !r.addCopyLedgerError(spec, &resp.Diagnostics) {
		return
	}
	e := r.engine(ctx, plan, &resp.Diagnostics)
	if e == nil || !addBrokerErrors(ctx, e, &resp.Diagnostics) {
		return
	}
	check := e.Preflight
	if r.runtime.planWithoutWrites {
		check = e.PreflightWithoutWrites
	}
	findings, err := check(ctx, spec)
	if err != nil {
		resp.Diagnostics.AddError("Cannot check the transfer against the brokers", err.Error())
		return
	}
	addFindings(r.runtime.unexplained(findings), &resp.Diagnostics)
}

// planDestroy tells the reviewer what destroying this transfer does with its messages.
func (r *queueTransferResource) planDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var state queueTransferModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || state.Status.ValueString() != statusUnfinished {
		return
	}
	var remaining int64 = -1
	if c, err := r.runtime.Client(state.Source.Broker.ValueString()); err == nil {
		if q, err := c.Queue(ctx, state.StagingQueue.ValueString()); err == nil {
			remaining = q.MessageCount
		}
	}
	what := "returns them to " + state.Source.Queue.ValueString()
	if state.OnDestroy.ValueString() == "leave" {
		what = "leaves them staged (on_destroy = \"leave\"); artemis_orphaned_transfers will report them"
	}
	resp.Diagnostics.AddWarning("Destroying an unfinished transfer",
		fmt.Sprintf("Run %s has %d messages in staging queue %s; destroy %s.", state.RunID.ValueString(), remaining, state.StagingQueue.ValueString(), what))
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
		if spec.Mode == transfer.ModeCopy {
			return e.Copy(ctx, spec)
		}
		return e.Move(ctx, spec)
	})
	if !ok {
		return
	}
	completed(&plan, res)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// run builds the engine for m and runs work under timeout. A failure is reported on diags, with
// how to continue.
func (r *queueTransferResource) run(ctx context.Context, m *queueTransferModel, timeout time.Duration, diags *diag.Diagnostics,
	work func(context.Context, *transfer.Engine, transfer.Spec) (transfer.Result, error)) (transfer.Result, bool) {
	spec, d := m.spec(ctx)
	diags.Append(d...)
	// Values unknown at plan meet the plan's refusals here, on their attributes.
	if !addSpecErrors(spec, diags) || !r.addCopyLedgerError(spec, diags) {
		return transfer.Result{}, false
	}
	e := r.engine(ctx, m, diags)
	if diags.HasError() || e == nil {
		return transfer.Result{}, false
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e.Hooks = r.runtime.hooksFor(cancel)
	res, err := work(runCtx, e, spec)
	if res.ExpiryLost > 0 {
		diags.AddWarning("Messages arrived without their expiry",
			fmt.Sprintf("Run %s relayed %d message(s) that carried an expiry on queue %q without it: scheduled messages "+
				"(the broker's browse, which the run reads expiries with, skips them) or messages a consumer or producer "+
				"on the source moved about while they were staged. They will not expire on %q.",
				res.RunID, res.ExpiryLost, spec.Source.Queue, spec.Target.Queue))
	}
	addCopyWarnings(res, spec, diags)
	if err != nil {
		reportRunError(err, diags)
		return res, false
	}
	addSummary(spec, res, diags)
	return res, true
}

// completed fills the computed attributes of a finished run.
func completed(m *queueTransferModel, res transfer.Result) {
	m.ID = types.StringValue(m.Source.Broker.ValueString() + "/" + res.RunID)
	m.RunID = types.StringValue(res.RunID)
	m.StagingQueue = types.StringValue(transfer.StagingQueue(res.RunID))
	if m.Mode.ValueString() == string(transfer.ModeCopy) {
		m.StagingQueue = types.StringNull() // a copy reads the source queue itself: it has no staging queue
	}
	m.T0 = types.StringValue(res.T0.UTC().Format(time.RFC3339Nano))
	m.Status = types.StringValue(statusCompleted)
	m.MessagesRelayed = types.Int64Value(res.RelayedTotal)
	m.MessagesResent = types.Int64Value(res.Resent)
	if m.MessagesReturned.IsNull() || m.MessagesReturned.IsUnknown() {
		m.MessagesReturned = types.Int64Value(0)
	}
	m.MessagesRemaining = types.Int64Value(0)
	m.FinishedAt = types.StringValue(time.Now().UTC().Format(time.RFC3339))
	m.DurationSeconds = types.Float64Value(durationSeconds(res))
}

// reportRunError explains a run that did not finish.
func reportRunError(err error, diags *diag.Diagnostics) {
	var refused *transfer.RefusedError
	switch {
	case errors.As(err, &refused):
		addFindings(refused.Findings, diags)
	case errors.Is(err, transfer.ErrInterrupted):
		diags.AddError("Transfer interrupted; no message was lost",
			err.Error()+"\n\nRun terraform apply again to resume the same run; the resource is not tainted.")
	default:
		diags.AddError("Transfer did not finish; no message was lost", err.Error())
	}
}

// Read keeps a completed transfer as it is: its queues are gone by design, and nothing about the
// brokers can make it un-happen. For an unfinished (imported) run it reads the run from the
// source broker.
func (r *queueTransferResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state queueTransferModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || state.Status.ValueString() == statusCompleted || r.runtime == nil {
		return
	}
	ctx = r.runtime.MaskSecrets(ctx)
	src := brokerClient(r.runtime, state.Source.Broker.ValueString(), path.Root("source").AtName("broker"), &resp.Diagnostics)
	if src == nil {
		return
	}
	e := &transfer.Engine{Source: src}
	run, err := e.UnfinishedRun(ctx, state.RunID.ValueString())
	if errors.Is(err, transfer.ErrNoSuchRun) {
		// The run finished or was returned elsewhere.
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the transfer's run", err.Error())
		return
	}
	if run.Manifest == nil {
		resp.Diagnostics.AddError("Run without a manifest",
			fmt.Sprintf("Run %s has a staging queue but no readable manifest (%v); return it with artemis_orphaned_transfers instead.", run.RunID, run.ManifestError))
		return
	}
	adopt(&state, run)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// adopt fills the model from a run found on the source broker.
func adopt(m *queueTransferModel, run transfer.UnfinishedRun) {
	spec := run.Manifest.Spec
	m.RunID = types.StringValue(run.RunID)
	m.StagingQueue = types.StringValue(run.StagingQueue)
	m.T0 = types.StringValue(run.T0.UTC().Format(time.RFC3339Nano))
	m.Status = types.StringValue(statusUnfinished)
	m.Mode = types.StringValue(string(spec.Mode))
	if m.Source == nil {
		m.Source = &endpointModel{Broker: types.StringValue(spec.Source.Broker), Address: types.StringNull()}
	}
	m.Source.Queue = types.StringValue(spec.Source.Queue)
	if m.Target == nil {
		m.Target = &endpointModel{Broker: types.StringValue(spec.Target.Broker), Address: types.StringNull()}
	}
	m.Target.Queue = types.StringValue(spec.Target.Queue)
	m.Filter = types.StringNull()
	if spec.Selection.Filter != "" {
		m.Filter = types.StringValue(spec.Selection.Filter)
	}
	m.MessageIDs = types.ListNull(types.StringType)
	if len(spec.Selection.MessageIDs) > 0 {
		ids := make([]types.String, len(spec.Selection.MessageIDs))
		for i, id := range spec.Selection.MessageIDs {
			ids[i] = types.StringValue(id)
		}
		m.MessageIDs, _ = types.ListValueFrom(context.Background(), types.StringType, ids)
	}
	m.MessagesRemaining = types.Int64Value(run.Messages)
	if m.MessagesRelayed.IsNull() || m.MessagesRelayed.IsUnknown() {
		m.MessagesRelayed = types.Int64Value(0)
	}
	if m.MessagesResent.IsNull() || m.MessagesResent.IsUnknown() {
		m.MessagesResent = types.Int64Value(0)
	}
	if m.MessagesReturned.IsNull() || m.MessagesReturned.IsUnknown() {
		m.MessagesReturned = types.Int64Value(0)
	}
	m.FinishedAt = types.StringNull()
	for _, d := range []struct {
		v   *types.Int64
		def int64
	}{{&m.BatchSize, defaultBatchSize}, {&m.StagingChunkSize, defaultStagingChunkSize}, {&m.MaxInFlightBytes, defaultMaxInFlightBytes}} {
		if d.v.IsNull() || d.v.IsUnknown() {
			*d.v = types.Int64Value(d.def)
		}
	}
	if m.OnDestroy.IsNull() || m.OnDestroy.IsUnknown() {
		m.OnDestroy = types.StringValue("return")
	}
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
	timeout, diags := plan.Timeouts.Update(ctx, defaultCreateTimeout)
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

// Delete forgets a completed transfer; its messages stay on the target. An unfinished run is
// returned to its source, or left staged, as on_destroy says.
func (r *queueTransferResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state queueTransferModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || state.Status.ValueString() != statusUnfinished {
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
	e := r.engine(ctx, &state, &resp.Diagnostics)
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
// whose apply was interrupted and whose configuration is gone. Apply then resumes it, destroy
// returns it.
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
		run, err := (&transfer.Engine{Source: src}).UnfinishedRun(ctx, runID)
		switch {
		case errors.Is(err, transfer.ErrNoSuchRun), err == nil && run.Manifest == nil:
			resp.Diagnostics.AddError("No such unfinished run",
				fmt.Sprintf("Broker %q has no staging queue %s with a manifest; artemis_orphaned_transfers lists the runs there. "+
					"(Import adopts moves. A copy keeps no staging queue: apply its configuration again, and the ledger finds and resumes its unfinished run.)",
					broker, transfer.StagingQueue(runID)))
			return
		case err != nil:
			resp.Diagnostics.AddError("Cannot read the run", err.Error())
			return
		}
		adopt(&m, run)
		m.Target.Broker = types.StringValue(run.Manifest.Spec.Target.Broker)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// timeoutsAttrTypes are the attribute types of the timeouts attribute, for a null value of it.
func timeoutsAttrTypes(ctx context.Context) map[string]attr.Type {
	t := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}).GetType()
	if withAttrs, ok := t.(attr.TypeWithAttributeTypes); ok {
		return withAttrs.AttributeTypes()
	}
	return map[string]attr.Type{}
}
