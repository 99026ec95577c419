package provider

// How artemis_queue_transfer drives the engine: it builds one for the model's brokers, checks a
// planned transfer with it, and runs a transfer under its timeout.

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// engine builds the transfer engine for the model's brokers; problems are added to diags on
// the broker attributes.
func (r *queueTransferResource) engine(ctx context.Context, m *queueTransferModel, diags *diag.Diagnostics) *transfer.Engine {
	src := brokerClient(r.runtime, m.Source.Broker.ValueString(), path.Root("source").AtName("broker"), diags)
	tgt := brokerClient(r.runtime, m.Target.Broker.ValueString(), path.Root("target").AtName("broker"), diags)
	if src == nil || tgt == nil {
		return nil
	}
	book, err := r.runtime.bookkeeper(ctx)
	if err != nil {
		diags.AddError("Cannot use the transfer ledger (ledger_dsn)", err.Error()+
			"\n\nNothing was moved. Check the ledger's PostgreSQL, or unset ledger_dsn to move without a ledger.")
		return nil
	}
	return &transfer.Engine{Source: src, Target: tgt, Options: m.options(ctx), Bookkeeper: book, DuplicateProbes: &r.runtime.probes, PassedChecks: &r.runtime.checks}
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
	addExpiryWarning(res, spec, diags)
	addCopyWarnings(res, spec, diags)
	if err != nil {
		reportRunError(err, diags)
		return res, false
	}
	addSummary(spec, res, diags)
	return res, true
}
