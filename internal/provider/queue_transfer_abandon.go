package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// An unfinished copy in Terraform: a copy keeps no staging queue, so the ledger, through the
// engine, is where an import finds it (by the same "<source broker>/<run id>" as a move), where a refresh reads it,
// and where a destroy abandons it. An abandoned copy is finished: it stays in the ledger until the operator purges it.

// unfinishedCopy looks up the unfinished copy runID through the engine, in the ledger; found
// is false when the ledger has no such run, or has it as a move or as finished. Reading a run
// needs the ledger's schema at this provider's version: an import (writes) migrates it as an
// apply would; a refresh of a schema not yet migrated finds nothing this provider recorded
// (bookkeeper gives no ledger then).
func (r *queueTransferResource) unfinishedCopy(ctx context.Context, runID string, writes bool) (run transfer.UnfinishedRun, found bool, err error) {
	book, err := r.runtime.bookkeeper(ctx, writes)
	if err != nil {
		return transfer.UnfinishedRun{}, false, err
	}
	run, err = (&transfer.Engine{Bookkeeper: book}).UnfinishedRun(ctx, runID, transfer.ModeCopy)
	if errors.Is(err, transfer.ErrNoSuchRun) {
		return transfer.UnfinishedRun{}, false, nil
	}
	return run, err == nil, err
}

// importCopy adopts the unfinished copy runID, of source broker broker, from the ledger into m.
// It reports whether it did; it adds an error only when the ledger cannot be read, or the copy
// is of another source broker.
func (r *queueTransferResource) importCopy(ctx context.Context, broker, runID string, m *queueTransferModel, diags *diag.Diagnostics) bool {
	run, found, err := r.unfinishedCopy(ctx, runID, true)
	if err != nil {
		diags.AddAttributeError(path.Root("id"), "Cannot read the transfer ledger (ledger_dsn)",
			fmt.Sprintf("Looking up copy run %s: %v\n\nCheck the ledger's PostgreSQL and import again.", runID, err))
		return false
	}
	if !found {
		return false
	}
	if src := run.Spec.Source.Broker; src != broker {
		diags.AddAttributeError(path.Root("id"), "Copy run of another source broker",
			fmt.Sprintf("The ledger records copy run %s from broker %q, not %q: import it as %s/%s.", runID, src, broker, src, runID))
		return false
	}
	adoptCopy(m, run)
	return true
}

// adoptCopy fills the model from an unfinished copy as the ledger records it. An id selection
// is recorded as its number of ids only: the configuration gives the ids.
func adoptCopy(m *queueTransferModel, run transfer.UnfinishedRun) {
	m.RunID = types.StringValue(run.RunID)
	m.Mode = types.StringValue(string(transfer.ModeCopy))
	m.Status = types.StringValue(statusUnfinished)
	m.T0 = types.StringValue(run.T0.UTC().Format(time.RFC3339Nano))
	m.StagingQueue = types.StringNull()
	if m.Source == nil {
		m.Source = &endpointModel{Address: types.StringNull()}
	}
	m.Source.Broker, m.Source.Queue = types.StringValue(run.Spec.Source.Broker), types.StringValue(run.Spec.Source.Queue)
	if m.Target == nil {
		m.Target = &endpointModel{Address: types.StringNull()}
	}
	m.Target.Broker, m.Target.Queue = types.StringValue(run.Spec.Target.Broker), types.StringValue(run.Spec.Target.Queue)
	m.Filter = types.StringNull()
	if f := run.Spec.Selection.Filter; f != "" {
		m.Filter = types.StringValue(f)
	}
	if run.SelectedIDs == 0 || m.MessageIDs.IsUnknown() || m.MessageIDs.ElementType(context.Background()) == nil {
		m.MessageIDs = types.ListNull(types.StringType) // an import; a refresh keeps the ids state has
	}
	m.MessagesRelayed = types.Int64Value(run.Copied)
	m.MessagesRemaining = types.Int64Null() // a copy knows what is left only by browsing the source
	fillAdopted(m)
}

// readCopy refreshes an unfinished (imported) copy from the ledger: it leaves state once the
// ledger has it as finished, completed or abandoned elsewhere.
func (r *queueTransferResource) readCopy(ctx context.Context, state *queueTransferModel, resp *resource.ReadResponse) {
	run, found, err := r.unfinishedCopy(ctx, state.RunID.ValueString(), false)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the copy's run from the transfer ledger (ledger_dsn)",
			fmt.Sprintf("Copy run %s: %v\n\nCheck the ledger's PostgreSQL and run the command again.", state.RunID.ValueString(), err))
		return
	}
	if !found {
		resp.State.RemoveResource(ctx)
		return
	}
	adoptCopy(state, run)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// abandonCopy is the destroy of an unfinished copy: a copy has nothing staged to return, so
// on_destroy = "return" (the default) abandons it in the ledger, and "leave" leaves it
// unfinished, for a later apply of its configuration (or an import) to resume.
func (r *queueTransferResource) abandonCopy(ctx context.Context, state *queueTransferModel, diags *diag.Diagnostics) {
	runID := state.RunID.ValueString()
	if state.OnDestroy.ValueString() == "leave" {
		diags.AddWarning("Unfinished copy left in the ledger",
			fmt.Sprintf("Copy run %s stays unfinished in the transfer ledger; an apply of its configuration, or an import of %s/%s, resumes it.",
				runID, state.Source.Broker.ValueString(), runID))
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, defaultDeleteTimeout)
	diags.Append(d...)
	e := r.engine(ctx, state, true, diags)
	if diags.HasError() || e == nil {
		return
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := e.AbandonCopy(runCtx, runID); err != nil {
		diags.AddError("Could not abandon the copy; nothing was lost",
			fmt.Sprintf("%v\n\nThe copy stays in state, unfinished: what it copied is on the target and the source was never touched. "+
				"Run terraform destroy again (once the apply that runs it has finished, when another one does).", err))
	}
}
