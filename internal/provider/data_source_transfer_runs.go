package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
)

var _ datasource.DataSourceWithConfigure = (*transferRunsDataSource)(nil)

// NewTransferRunsDataSource returns the artemis_transfer_runs data source.
func NewTransferRunsDataSource() datasource.DataSource { return &transferRunsDataSource{} }

// transferRunsDataSource is the audit of transfers: the runs the ledger recorded, with their
// events, long after their staging queues are gone.
type transferRunsDataSource struct {
	runtime *providerRuntime
}

// transferRunsMaxEvents bounds the events read per run; a run has a handful (created,
// lease-taken, interrupted, resumed, completed), so this is far above any real run.
const transferRunsMaxEvents = 1000

// transferRunsDefaultLimit is how many runs the data source reads when limit is not set, and
// transferRunsMaxLimit the most it reads at all.
const (
	transferRunsDefaultLimit = 100
	transferRunsMaxLimit     = 10_000
)

type transferRunsModel struct {
	SourceBroker types.String      `tfsdk:"source_broker"`
	SourceQueue  types.String      `tfsdk:"source_queue"`
	TargetBroker types.String      `tfsdk:"target_broker"`
	TargetQueue  types.String      `tfsdk:"target_queue"`
	Status       types.String      `tfsdk:"status"`
	Limit        types.Int64       `tfsdk:"limit"`
	Runs         []transferRunItem `tfsdk:"runs"`
}

type transferRunItem struct {
	RunID              string                 `tfsdk:"run_id"`
	Fingerprint        string                 `tfsdk:"fingerprint"`
	Mode               string                 `tfsdk:"mode"`
	Status             string                 `tfsdk:"status"`
	SourceBroker       string                 `tfsdk:"source_broker"`
	SourceQueue        string                 `tfsdk:"source_queue"`
	TargetBroker       string                 `tfsdk:"target_broker"`
	TargetQueue        string                 `tfsdk:"target_queue"`
	Filter             string                 `tfsdk:"filter"`
	SelectedIDs        int64                  `tfsdk:"selected_ids"`
	T0                 string                 `tfsdk:"t0"`
	CreatedAt          string                 `tfsdk:"created_at"`
	UpdatedAt          string                 `tfsdk:"updated_at"`
	CreatedByUser      string                 `tfsdk:"created_by_user"`
	CreatedByHost      string                 `tfsdk:"created_by_host"`
	TerraformWorkspace string                 `tfsdk:"terraform_workspace"`
	Staged             int64                  `tfsdk:"staged"`
	Relayed            int64                  `tfsdk:"relayed"`
	Resent             int64                  `tfsdk:"resent"`
	Returned           int64                  `tfsdk:"returned"`
	LeaseHolder        types.String           `tfsdk:"lease_holder"`
	Events             []transferRunEventItem `tfsdk:"events"`
}

type transferRunEventItem struct {
	ID     int64  `tfsdk:"id"`
	At     string `tfsdk:"at"`
	Kind   string `tfsdk:"kind"`
	Detail string `tfsdk:"detail"`
}

// transferRunStatuses are the statuses the status filter accepts: every status of the ledger.
var transferRunStatuses = ledger.StatusNames()

// backticked renders names as a Markdown list of code spans: `a`, `b` or `c` (with or) or
// `a`, `b`, `c` (with "").
func backticked(names []string, or string) string {
	if len(names) == 0 {
		return ""
	}
	if or == "" || len(names) == 1 {
		return "`" + strings.Join(names, "`, `") + "`"
	}
	return "`" + strings.Join(names[:len(names)-1], "`, `") + "` " + or + " `" + names[len(names)-1] + "`"
}

func (d *transferRunsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_transfer_runs"
}

func (d *transferRunsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(desc string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	num := func(desc string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
	}
	filter := func(desc string) schema.Attribute {
		return schema.StringAttribute{Optional: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the transfer runs recorded in the PostgreSQL ledger of the provider's `ledger_dsn`, newest first, " +
			"with each run's events: who started it (OS user, host, Terraform workspace), when, what it moved, its counters, and how it ended. " +
			"The ledger keeps them after the staging queues are gone, so this is the audit trail of transfers. Needs `ledger_dsn`.",
		Attributes: map[string]schema.Attribute{
			"source_broker": filter("Only runs from this broker, by its key in the provider's `brokers` map as the run recorded it."),
			"source_queue":  filter("Only runs from this queue."),
			"target_broker": filter("Only runs to this broker, by its key, as `source_broker`."),
			"target_queue":  filter("Only runs to this queue."),
			"status": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.OneOf(transferRunStatuses...)},
				MarkdownDescription: "Only runs in this status: one of " + backticked(transferRunStatuses, "") +
					". `running` includes runs whose process died (see `lease_holder` and the events)."},
			"limit": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(1, transferRunsMaxLimit)},
				MarkdownDescription: fmt.Sprintf("At most this many runs, newest first. Defaults to %d; at most %d.", transferRunsDefaultLimit, transferRunsMaxLimit)},
			"runs": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The matching runs, newest first.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"run_id":      str("The run's id (a move's staging queue was `studio.transfer.<run_id>`)."),
					"fingerprint": str("The transfer's spec key: runs of the same transfer share it."),
					"mode":        str("What the run did to its source: " + backticked(ledger.ModeNames(), "or") + "."),
					"status": str("One of " + backticked(transferRunStatuses, "or") + ". `interrupted` is resumable, `failed` stopped on an error a resume does not fix by itself, " +
						"`abandoned` is a copy ended without finishing (what it copied stays on the target)."),
					"source_broker":       str("The source broker's key in the `brokers` map of the configuration that started the run."),
					"source_queue":        str("The source queue."),
					"target_broker":       str("The target broker's key, as `source_broker`."),
					"target_queue":        str("The target queue."),
					"filter":              str("The selection's filter; empty for a whole queue or an id selection."),
					"selected_ids":        num("How many message ids an id selection named; 0 otherwise."),
					"t0":                  str("The run's start time (RFC 3339): a filter or whole-queue selection took the messages produced up to it."),
					"created_at":          str("When the run was recorded (RFC 3339)."),
					"updated_at":          str("When the run was last written (RFC 3339)."),
					"created_by_user":     str("OS user of the process that started the run."),
					"created_by_host":     str("Host of that process."),
					"terraform_workspace": str("Terraform workspace of that process: `TF_WORKSPACE` when set, else the one `terraform workspace select` chose for the working directory, else `default`."),
					"staged":              num("Messages moved into staging, by every process that worked on the run."),
					"relayed":             num("Messages confirmed by the target, each counted once."),
					"resent":              num("Copies sent again after an interruption and dropped by the target as duplicates."),
					"returned":            num("Messages put back on the source queue."),
					"lease_holder":        str("The process working on the run now (host:pid:token, the token 128 random bits no other process shares), null when none."),
					"events": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The run's events, oldest first.",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"id":     num("Increases in the order events were recorded."),
							"at":     str("When (RFC 3339)."),
							"kind":   str("One of " + backticked(ledger.EventKindNames(), "or") + "."),
							"detail": str("The event's detail as JSON: counts, the holder, and why a run stopped."),
						}},
					},
				}},
			},
		},
	}
}

func (d *transferRunsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (d *transferRunsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var model transferRunsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	if resp.Diagnostics.HasError() || d.runtime == nil {
		return
	}
	ctx = d.runtime.MaskSecrets(ctx)
	if d.runtime.LedgerDSN() == "" {
		resp.Diagnostics.AddError("No transfer ledger",
			"artemis_transfer_runs reads the PostgreSQL ledger: set ledger_dsn in the provider block (or "+envLedgerDSN+").")
		return
	}
	filter := ledger.RunFilter{SourceBroker: model.SourceBroker.ValueString(), SourceQueue: model.SourceQueue.ValueString(),
		TargetBroker: model.TargetBroker.ValueString(), TargetQueue: model.TargetQueue.ValueString(), Limit: transferRunsDefaultLimit}
	if !model.Limit.IsNull() {
		filter.Limit = int(model.Limit.ValueInt64())
	}
	if s := model.Status.ValueString(); s != "" {
		filter.Statuses = []ledger.Status{ledger.Status(s)} // a known status: the schema's validator refused any other at plan
	}
	l, err := d.runtime.Ledger(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the transfer ledger (ledger_dsn)", err.Error())
		return
	}
	// The data source only reads: the first apply that records a run creates or migrates the
	// schema, so a ledger no apply has written to yet holds no run.
	st, err := d.runtime.ledgerSchema(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the transfer ledger (ledger_dsn)", err.Error())
		return
	}
	if st.Missing() {
		resp.Diagnostics.AddWarning("The transfer ledger records no run yet (ledger_dsn)",
			fmt.Sprintf("The ledger's database has no schema %s yet, so runs is empty. The first terraform apply of an "+
				"artemis_queue_transfer with this ledger_dsn creates it and records its run; plan and the data sources only read.", ledger.Schema))
		model.Runs = []transferRunItem{}
		resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
		return
	}
	runs, err := l.ListRuns(ctx, filter)
	if err != nil {
		detail := err.Error()
		if !st.Current() {
			detail += fmt.Sprintf("\n\nThe ledger's schema %s is at version %d, older than this provider's %d; the first terraform apply "+
				"that records a run migrates it. Apply a transfer first (terraform apply -target=artemis_queue_transfer.<name>), then read the runs.",
				ledger.Schema, st.Version, st.Known)
		}
		resp.Diagnostics.AddError("Cannot read the transfer ledger (ledger_dsn)", detail)
		return
	}
	model.Runs = make([]transferRunItem, 0, len(runs))
	for _, run := range runs {
		events, err := l.Events(ctx, run.ID, 0, transferRunsMaxEvents)
		if err != nil {
			resp.Diagnostics.AddError("Cannot read the transfer ledger (ledger_dsn)", err.Error())
			return
		}
		model.Runs = append(model.Runs, runItem(run, events))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}

// runItem maps a ledger run and its events to the data source's values.
func runItem(run ledger.Run, events []ledger.Event) transferRunItem {
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	item := transferRunItem{RunID: run.ID, Fingerprint: run.Fingerprint, Mode: string(run.Mode), Status: string(run.Status),
		SourceBroker: run.SourceBroker, SourceQueue: run.SourceQueue, TargetBroker: run.TargetBroker, TargetQueue: run.TargetQueue,
		Filter: run.Filter, SelectedIDs: int64(run.SelectedIDs), T0: stamp(run.T0), CreatedAt: stamp(run.CreatedAt), UpdatedAt: stamp(run.UpdatedAt),
		CreatedByUser: run.CreatedBy.User, CreatedByHost: run.CreatedBy.Host, TerraformWorkspace: run.CreatedBy.Workspace,
		Staged: run.Counters.Staged, Relayed: run.Counters.Relayed, Resent: run.Counters.Resent, Returned: run.Counters.Returned,
		LeaseHolder: types.StringNull(), Events: make([]transferRunEventItem, 0, len(events))}
	if run.Lease != nil {
		item.LeaseHolder = types.StringValue(run.Lease.Holder)
	}
	for _, e := range events {
		detail, err := json.Marshal(e.Detail)
		if err != nil || e.Detail == nil {
			detail = []byte("{}")
		}
		item.Events = append(item.Events, transferRunEventItem{ID: e.ID, At: stamp(e.At), Kind: string(e.Kind), Detail: string(detail)})
	}
	return item
}
