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

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// engine builds the transfer engine for the model's brokers; problems are added to diags on
// the broker attributes. writes is false for a plan, which only reads the ledger, and true for
// an apply, which creates or migrates the ledger's schema before its first record.
func (r *queueTransferResource) engine(ctx context.Context, m *queueTransferModel, writes bool, diags *diag.Diagnostics) *transfer.Engine {
	src := brokerClient(r.runtime, m.Source.Broker.ValueString(), path.Root("source").AtName("broker"), diags)
	tgt := brokerClient(r.runtime, m.Target.Broker.ValueString(), path.Root("target").AtName("broker"), diags)
	if src == nil || tgt == nil {
		return nil
	}
	book, err := r.runtime.bookkeeper(ctx, writes)
	if err != nil {
		diags.AddError("Cannot use the transfer ledger (ledger_dsn)", err.Error()+
			"\n\nNothing was moved. Check the ledger's PostgreSQL, or unset ledger_dsn to move without a ledger.")
		return nil
	}
	return &transfer.Engine{Source: src, Target: tgt, Options: m.options(ctx), Bookkeeper: book, DuplicateProbes: &r.runtime.probes, StagingProbes: &r.runtime.stagingProbes, PassedChecks: &r.runtime.checks}
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
	e := r.engine(ctx, plan, false, &resp.Diagnostics)
	if e == nil || !addBrokerErrors(ctx, e, &resp.Diagnostics) {
		return
	}
	// By default the plan only reads; the proofs that need writes are left to apply (a
	// finding says so), which makes them before anything moves.
	check := e.PreflightWithoutWrites
	if r.runtime.planSendsCanaries {
		check = e.Preflight
	}
	findings, err := check(ctx, spec)
	if err != nil {
		resp.Diagnostics.AddError("Cannot check the transfer against the brokers", err.Error())
		return
	}
	findings = deferPlannedTargets(findings, preflight.Endpoint{Broker: spec.Target.Broker, Queue: spec.Target.Queue}, &r.runtime.planned)
	addFindings(ctx, r.runtime.unexplained(findings), &resp.Diagnostics)
	r.addLedgerSchemaWarning(ctx, &resp.Diagnostics)
}

// ledgerSchemaSummary names the provider attribute, since a resource's diagnostic cannot point
// into the provider block.
const ledgerSchemaSummary = "Apply creates or migrates the transfer ledger's schema (ledger_dsn)"

// addLedgerSchemaWarning says, once per plan, that apply will create or migrate the ledger's
// schema before it records a run: a write to the database the reviewer may need to grant.
func (r *queueTransferResource) addLedgerSchemaWarning(ctx context.Context, diags *diag.Diagnostics) {
	if r.runtime.LedgerDSN() == "" {
		return
	}
	st, err := r.runtime.ledgerSchema(ctx)
	if err != nil || st.Current() {
		return // an unreadable ledger failed the provider's configuration already
	}
	what := fmt.Sprintf("migrates schema %s of the transfer ledger from version %d to %d", ledger.Schema, st.Version, st.Known)
	needs := "the ledger's user must own the schema's tables"
	if st.Missing() {
		what = fmt.Sprintf("creates schema %s of the transfer ledger (version %d) and its tables", ledger.Schema, st.Known)
		needs = fmt.Sprintf("the ledger's user needs CREATE on the database, or a schema %s created for it", ledger.Schema)
	}
	finding := preflight.Finding{Severity: preflight.Warning, Summary: ledgerSchemaSummary, Explanation: true,
		Detail: fmt.Sprintf("This plan only read the ledger. The first apply that records a run %s, in one transaction, before it "+
			"records anything: %s (see the ledger guide).", what, needs)}
	for _, f := range r.runtime.unexplained([]preflight.Finding{finding}) {
		diags.AddWarning(f.Summary, f.Detail)
	}
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
	e := r.engine(ctx, m, true, diags)
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
		reportRunError(ctx, err, stoppedRun{RunID: res.RunID, SourceBroker: spec.Source.Broker, Copy: spec.Mode == transfer.ModeCopy}, diags)
		return res, false
	}
	logSummary(ctx, spec, res)
	return res, true
}
