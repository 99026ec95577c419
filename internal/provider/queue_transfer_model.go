package provider

// The artemis_queue_transfer model and its mapping to the engine: the spec a plan or apply
// hands the engine, and the state a finished (completed) or found (adopt) run leaves.

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

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
	defaultUpdateTimeout    = 24 * time.Hour
	defaultDeleteTimeout    = time.Hour
)

// timeoutText writes a default timeout as the timeouts block takes it, e.g. "24h" or "90m".
func timeoutText(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dm", int(d.Minutes()))
}

// Bounds of the tuning attributes: the engine's own (transfer.Options documents why).
const (
	maxBatchSize        = transfer.MaxBatchSize
	maxStagingChunkSize = transfer.MaxChunkSize
	minMaxInFlightBytes = transfer.MinMaxInFlightBytes
)

// queueTransferModel is an artemis_queue_transfer as configured, planned and kept in state.
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
	Triggers          types.Map      `tfsdk:"triggers"`
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

// endpointModel is the source or target object of a transfer.
type endpointModel struct {
	Broker  types.String `tfsdk:"broker"`
	Queue   types.String `tfsdk:"queue"`
	Address types.String `tfsdk:"address"`
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

// options turns the model's tuning into the engine's options; the run's progress goes to the
// provider's log.
func (m *queueTransferModel) options(ctx context.Context) transfer.Options {
	return transfer.Options{
		BatchSize: int(m.BatchSize.ValueInt64()), ChunkSize: int(m.StagingChunkSize.ValueInt64()),
		MaxInFlightBytes: m.MaxInFlightBytes.ValueInt64(), CreatedBy: "terraform-provider-artemis",
		MaxMessagesPerSecond: float64(m.MaxMessagesPerSec.ValueInt64()), Progress: progressLogger(ctx, m),
	}
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

// adopt fills the model from a move found on the source broker, with its manifest.
func adopt(m *queueTransferModel, run transfer.UnfinishedRun) {
	spec := run.Spec
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
	fillAdopted(m)
}

// fillAdopted gives an adopted run's model (a move's from its manifest, a copy's from the
// ledger) the values its configuration would: defaults, and typed nulls.
func fillAdopted(m *queueTransferModel) {
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
	if m.Triggers.IsNull() {
		m.Triggers = types.MapNull(types.StringType) // an adopted run has no configuration, and a zero Map no element type
	}
}

// timeoutsAttrTypes are the attribute types of the timeouts attribute, for a null value of it.
func timeoutsAttrTypes(ctx context.Context) map[string]attr.Type {
	t := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}).GetType()
	if withAttrs, ok := t.(attr.TypeWithAttributeTypes); ok {
		return withAttrs.AttributeTypes()
	}
	return map[string]attr.Type{}
}
