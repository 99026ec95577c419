package provider

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

var _ resource.ResourceWithConfigure = (*transferReturnResource)(nil)

// NewTransferReturnResource returns the artemis_transfer_return resource.
func NewTransferReturnResource() resource.Resource { return &transferReturnResource{} }

// transferReturnResource returns an orphaned run's staged messages to their source queue, once,
// when it is created. It works from what the broker holds, so it also serves a run whose
// manifest (or configuration, or state) is gone.
type transferReturnResource struct {
	runtime *providerRuntime
}

type transferReturnModel struct {
	ID               types.String   `tfsdk:"id"`
	Broker           types.String   `tfsdk:"broker"`
	RunID            types.String   `tfsdk:"run_id"`
	SourceQueue      types.String   `tfsdk:"source_queue"`
	MessagesReturned types.Int64    `tfsdk:"messages_returned"`
	MessagesRelayed  types.Int64    `tfsdk:"messages_relayed"`
	ReturnedAt       types.String   `tfsdk:"returned_at"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
}

// defaultReturnTimeout bounds a return, as it bounds the one a destroy of an unfinished move makes.
const defaultReturnTimeout = defaultDeleteTimeout

func (r *transferReturnResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_transfer_return"
}

func (r *transferReturnResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	// A return happens once, on create: an edit of its timeouts keeps what it did.
	keepString := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	keepInt64 := []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Returns the staged messages of an orphaned transfer run (see `artemis_orphaned_transfers`) to the queue they " +
			"came from, broker-side, and removes the run's staging queue. It runs once, on create; destroying it only forgets it. " +
			"With the run's manifest, the messages of the batch that was in flight when the run died are first settled at the target " +
			"(which may already hold them) instead of returned, so none ends up on both brokers; that needs the target broker in the " +
			"provider's `brokers` under the name the manifest records. Without a manifest only what the broker holds is used: the " +
			"source queue recorded on each staged message (all must come from one queue), and the in-flight batch cannot be told apart.",
		Attributes: map[string]schema.Attribute{
			"id":                schema.StringAttribute{Computed: true, PlanModifiers: keepString, MarkdownDescription: "`<broker>/<run_id>`."},
			"broker":            schema.StringAttribute{Required: true, PlanModifiers: replace, MarkdownDescription: "The key, in the provider's `brokers` map, of the broker holding the staging queue."},
			"run_id":            schema.StringAttribute{Required: true, PlanModifiers: replace, MarkdownDescription: "The run to return."},
			"source_queue":      schema.StringAttribute{Computed: true, PlanModifiers: keepString, MarkdownDescription: "The queue the messages went back to."},
			"messages_returned": schema.Int64Attribute{Computed: true, PlanModifiers: keepInt64, MarkdownDescription: "Messages put back on the source queue."},
			"messages_relayed": schema.Int64Attribute{Computed: true, PlanModifiers: keepInt64,
				MarkdownDescription: "Messages of the last in-flight batch settled at the target instead."},
			"returned_at": schema.StringAttribute{Computed: true, PlanModifiers: keepString, MarkdownDescription: "When the return happened (RFC 3339)."},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true,
				CreateDescription: "How long the return may take before it stops with an error; what was returned by then stays " +
					"on the source queue, the rest stays staged, nothing is lost, and applying again returns the rest. " +
					fmt.Sprintf("Default `%s`.", timeoutText(defaultReturnTimeout))}),
		},
	}
}

func (r *transferReturnResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.runtime = runtimeFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *transferReturnResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan transferReturnModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || r.runtime == nil {
		return
	}
	ctx = r.runtime.MaskSecrets(ctx)
	timeout, diags := plan.Timeouts.Create(ctx, defaultReturnTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	src := brokerClient(r.runtime, plan.Broker.ValueString(), path.Root("broker"), &resp.Diagnostics)
	if src == nil {
		return
	}
	book, err := r.runtime.bookkeeper(ctx, true)
	if err != nil {
		resp.Diagnostics.AddError("Cannot use the transfer ledger (ledger_dsn)", err.Error()+"\n\nNothing was returned yet; the staged messages stay where they are.")
		return
	}
	e := &transfer.Engine{Source: src, Bookkeeper: book}
	// None in a release; a provider built with -tags faultpoints stops a return at an exact point.
	e.Hooks = r.runtime.hooksFor(cancel)
	runID := plan.RunID.ValueString()
	orphans, err := e.Orphans(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the run", err.Error()+"\n\nNext: once broker "+strconv.Quote(plan.Broker.ValueString())+
			" answers, run terraform apply again; nothing was returned yet.")
		return
	}
	var orphan *transfer.Orphan
	for i := range orphans {
		if orphans[i].RunID == runID {
			orphan = &orphans[i]
		}
	}
	if orphan == nil {
		resp.Diagnostics.AddAttributeError(path.Root("run_id"), "No such orphaned run (run_id)",
			fmt.Sprintf("Broker %q has no orphaned run %s: it finished, was returned, or a process is working on it. artemis_orphaned_transfers lists the orphans.",
				plan.Broker.ValueString(), runID))
		return
	}
	if orphan.Manifest != nil {
		// The in-flight batch is settled at the target, when the provider knows it.
		if tgt, err := r.runtime.Client(orphan.Manifest.Spec.Target.Broker); err == nil {
			e.Target = tgt
		}
	}
	res, err := e.ReturnOrphan(ctx, runID)
	if err != nil {
		resp.Diagnostics.AddError("Could not return the run; no message was lost", err.Error()+"\n\n"+
			"Next: run terraform apply again, which returns what is still staged; messages already returned stay on the source queue.")
		return
	}
	plan.ID = types.StringValue(plan.Broker.ValueString() + "/" + runID)
	plan.SourceQueue = types.StringValue(orphan.SourceQueue)
	plan.MessagesReturned = types.Int64Value(res.Returned)
	plan.MessagesRelayed = types.Int64Value(res.Relayed)
	plan.ReturnedAt = types.StringValue(time.Now().UTC().Format(time.RFC3339))
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Read keeps the record of a return: it happened, whatever the broker holds now.
func (r *transferReturnResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {
}

// Update records a change of timeouts, the only input that does not force replacement; the
// return itself happened on create.
func (r *transferReturnResource) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

// Delete forgets the return; the messages stay where it put them.
func (r *transferReturnResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}
