package provider

// Diagnostics of artemis_queue_transfer: findings of the preflight, refusals of the spec, broker
// errors, and what a run reports, each on the attribute at fault where there is one.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/provider/validators"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// addFindings turns preflight findings into diagnostics on their attributes. The summary also
// names the attribute, since Terraform cannot point inside an object such as target = {...}
// and shows the resource block instead. Notes, which ask nothing of a reviewer, go to the log
// at INFO instead: a plan's warnings are the findings to act on.
func addFindings(ctx context.Context, findings []preflight.Finding, diags *diag.Diagnostics) {
	for _, f := range findings {
		summary := f.Summary
		if f.Attribute != "" {
			summary += " (" + f.Attribute + ")"
		}
		switch {
		case f.Severity == preflight.Note:
			tflog.Info(ctx, "artemis_queue_transfer plan: "+summary+": "+f.Detail)
		case f.Severity == preflight.Error && f.Attribute != "":
			diags.AddAttributeError(attributePath(path.Empty(), f.Attribute), summary, f.Detail)
		case f.Severity == preflight.Error:
			diags.AddError(f.Summary, f.Detail)
		case f.Attribute != "":
			diags.AddAttributeWarning(attributePath(path.Empty(), f.Attribute), summary, f.Detail)
		default:
			diags.AddWarning(f.Summary, f.Detail)
		}
	}
}

// reportRunError explains a run that did not finish, and ends with what to do next.
func reportRunError(ctx context.Context, err error, stopped stoppedRun, diags *diag.Diagnostics) {
	var refused *transfer.RefusedError
	switch {
	case errors.As(err, &refused):
		// Each refusing finding says its own fix on its attribute; a refused resume also says
		// where the run's messages wait meanwhile.
		addFindings(ctx, refused.Findings, diags)
		if refused.ResumedRunID != "" {
			diags.AddError("Run "+refused.ResumedRunID+" not resumed; no message was lost", err.Error()+"\n\n"+nextStep(err, stopped))
		}
	case errors.Is(err, transfer.ErrInterrupted):
		diags.AddError("Transfer interrupted; no message was lost", err.Error()+"\n\n"+nextStep(err, stopped))
	default:
		diags.AddError("Transfer did not finish; no message was lost", err.Error()+"\n\n"+nextStep(err, stopped))
	}
}

// addSpecErrors reports, on their attributes, what transfer.Spec.Validate refuses in spec, and
// reports whether spec is valid. The schema's validators refuse the same values earlier; this
// catches values that were unknown when they ran.
func addSpecErrors(spec transfer.Spec, diags *diag.Diagnostics) bool {
	err := spec.Validate()
	if err == nil {
		return true
	}
	before := diags.ErrorsCount()
	if spec.Mode != transfer.ModeMove && spec.Mode != transfer.ModeCopy {
		diags.AddAttributeError(path.Root("mode"), validators.InvalidSummary(path.Root("mode")),
			fmt.Sprintf("mode = %q is not supported: set mode = %q or %q, or leave it out (move).", spec.Mode, transfer.ModeMove, transfer.ModeCopy))
	}
	for _, ep := range []struct {
		name string
		e    transfer.Endpoint
	}{{"source", spec.Source}, {"target", spec.Target}} {
		for attr, value := range map[string]string{"broker": ep.e.Broker, "queue": ep.e.Queue} {
			p := path.Root(ep.name).AtName(attr)
			if value == "" {
				diags.AddAttributeError(p, validators.InvalidSummary(p), fmt.Sprintf("%s is empty: set it to the %s's %s.", p, ep.name, attr))
			}
		}
		p := path.Root(ep.name).AtName("queue")
		if detail := validators.RunQueueProblem(p, ep.e.Queue); detail != "" {
			diags.AddAttributeError(p, validators.InvalidSummary(p), detail)
		}
	}
	validators.AddSameQueue(spec.Source, spec.Target, diags)
	if spec.Selection.Filter != "" && len(spec.Selection.MessageIDs) > 0 {
		diags.AddAttributeError(path.Root("filter"), validators.InvalidSummary(path.Root("filter")),
			"filter and message_ids are both set: a transfer selects by one of them. Remove one.")
	}
	for i, id := range spec.Selection.MessageIDs {
		if strings.TrimSpace(id) == "" {
			p := path.Root("message_ids").AtListIndex(i)
			diags.AddAttributeError(p, validators.InvalidSummary(p), fmt.Sprintf("%s is empty: give a JMS message id (ID:<uuid>) or an AMQP message-id, or remove it.", p))
		}
	}
	if diags.ErrorsCount() == before {
		// A rule of the engine's that this mapping does not know yet: still refuse.
		diags.AddError("Invalid transfer", err.Error())
	}
	return false
}

// addBrokerErrors reaches each broker before the preflight, through its management endpoint
// and over AMQP, so that a broker that cannot be reached, refuses the login or presents a
// certificate that is not trusted is reported on its own broker attribute with what to fix
// (the preflight's error does not say which side failed, and a failed AMQP connection would
// read as a missing permission). It reports whether both brokers answered.
func addBrokerErrors(ctx context.Context, e *transfer.Engine, diags *diag.Diagnostics) bool {
	ok := true
	for _, side := range []struct {
		name   string
		client *artemis.Client
	}{{"source", e.Source}, {"target", e.Target}} {
		_, err := side.client.BrokerInfo(ctx)
		if err == nil {
			var conn *artemis.Connection
			if conn, err = side.client.Connect(ctx); err == nil {
				_ = conn.Close()
			}
		}
		if err != nil {
			p := path.Root(side.name).AtName("broker")
			diags.AddAttributeError(p, brokerErrorSummary(side.name, err)+" ("+p.String()+")",
				fmt.Sprintf("%v.%s\n\nNothing was moved.", err, brokerAdvice(side.client.Name(), err)))
			ok = false
		}
	}
	return ok
}

// brokerErrorSummary names what went wrong with the role ("source", "target") broker.
func brokerErrorSummary(role string, err error) string {
	switch {
	case errors.Is(err, artemis.ErrUnauthorized):
		return "The " + role + " broker refused the login"
	case errors.Is(err, artemis.ErrForbidden):
		// The login worked; JMX role-based access refused an operation or attribute.
		return "The " + role + " broker user lacks a management right"
	case errors.Is(err, artemis.ErrUntrustedCertificate):
		return "The " + role + " broker's TLS certificate is not trusted"
	default:
		return "Cannot reach the " + role + " broker"
	}
}

// brokerAdvice says what to check in the provider block for a broker error.
func brokerAdvice(broker string, err error) string {
	switch {
	case errors.Is(err, artemis.ErrUnauthorized):
		return fmt.Sprintf(" Check username and password of brokers[%q] in the provider block (or %s).",
			broker, brokerEnvName(broker, "PASSWORD"))
	case errors.Is(err, artemis.ErrForbidden):
		return fmt.Sprintf(" Grant the role of the user of brokers[%q] the management rights the broker-permissions guide lists "+
			"(get*, is* and list* to read the broker, in etc/management.xml), or configure a user that has them.", broker)
	case errors.Is(err, artemis.ErrUntrustedCertificate):
		return fmt.Sprintf(" Check tls of brokers[%q] in the provider block: its CA (tls.ca_cert_file or tls.ca_cert_pem) "+
			"must have signed the broker's certificate, and be valid now.", broker)
	default:
		return fmt.Sprintf(" Check management_url and amqp_urls of brokers[%q] in the provider block, and that the broker "+
			"runs and is reachable from here.", broker)
	}
}

// copyNeedsLedgerSummary names the provider attribute a copy needs, since a resource's
// diagnostic cannot point into the provider block.
const copyNeedsLedgerSummary = "Copy needs the transfer ledger (ledger_dsn)"

// addCopyLedgerError refuses a copy when the provider has no ledger_dsn, at plan and again at
// apply: the ledger is a copy's only record of what it copied, so without one a resumed copy
// could not tell what the target already holds. It reports false when it refused.
func (r *queueTransferResource) addCopyLedgerError(spec transfer.Spec, diags *diag.Diagnostics) bool {
	if spec.Mode != transfer.ModeCopy || r.runtime == nil || r.runtime.LedgerDSN() != "" {
		return true
	}
	diags.AddAttributeError(path.Root("mode"), copyNeedsLedgerSummary,
		fmt.Sprintf("mode = %q records every message it copies in the PostgreSQL transfer ledger, so that a copy resumed after an "+
			"interruption neither skips nor doubles a message; the source queue itself keeps no trace of a copy. Set ledger_dsn "+
			"in the provider block (or ARTEMIS_LEDGER_DSN), see the ledger guide, or use mode = %q. Nothing was copied.",
			transfer.ModeCopy, transfer.ModeMove))
	return false
}

// addCopyWarnings tells the operator what a copy could not tell apart: messages identical in
// properties, application properties, body, header and annotations, of which the target got
// one each.
func addCopyWarnings(res transfer.Result, spec transfer.Spec, diags *diag.Diagnostics) {
	if spec.Mode != transfer.ModeCopy || res.CopyIndistinguishable == 0 {
		return
	}
	diags.AddWarning("Identical messages were copied once",
		fmt.Sprintf("Run %s met %d message(s) on %q identical to another one in message id, properties, application "+
			"properties, body, durability, priority and annotations. No reader can tell such messages apart, so the target got one of each. Producers that "+
			"set a unique message id (every JMS client does) never meet this.", res.RunID, res.CopyIndistinguishable, spec.Source.Queue))
}

// addExpiryWarning tells the operator which messages lost their expiry on the way, and why.
func addExpiryWarning(res transfer.Result, spec transfer.Spec, diags *diag.Diagnostics) {
	if res.ExpiryLost == 0 {
		return
	}
	diags.AddWarning("Messages arrived without their expiry",
		fmt.Sprintf("Run %s relayed %d message(s) that carried an expiry on queue %q without it: scheduled messages "+
			"(the broker's browse, which the run reads expiries with, skips them) or messages a consumer or producer "+
			"on the source moved about while they were staged. They will not expire on %q.",
			res.RunID, res.ExpiryLost, spec.Source.Queue, spec.Target.Queue))
}

// attributePath is the path of a dotted attribute name ("target.queue", "tls.ca_cert_file")
// below parent: path.Empty() for a resource's own attributes, as a preflight finding names
// them, or a broker's entry of the provider block. An empty name is parent itself.
func attributePath(parent path.Path, dotted string) path.Path {
	if dotted == "" {
		return parent
	}
	p := parent
	for _, step := range strings.Split(dotted, ".") {
		p = p.AtName(step)
	}
	return p
}

// resumeWarning says what apply does with an adopted, unfinished run: a move relays what its
// staging queue holds; a copy has no staging queue and goes on browsing the source from what
// its ledger recorded as copied.
func resumeWarning(state queueTransferModel) string {
	target := state.Target.Broker.ValueString() + "/" + state.Target.Queue.ValueString()
	if state.Mode.ValueString() == string(transfer.ModeCopy) {
		return fmt.Sprintf("Copy run %s is unfinished; apply copies the rest of its selection (messages up to the run's "+
			"original start time that its ledger does not record as copied) to %s, and leaves the source queue as it is.",
			state.RunID.ValueString(), target)
	}
	return fmt.Sprintf("Run %s has %d messages in staging queue %s; apply relays them to %s with the run's original start time.",
		state.RunID.ValueString(), state.MessagesRemaining.ValueInt64(), state.StagingQueue.ValueString(), target)
}

// noManifestWarning says what the next apply does with a move's run whose manifest is missing:
// with messages staged it writes the manifest again and resumes the run; with nothing staged
// nothing moved under the run, so apply removes it and starts the transfer again as a new run.
// Records that could not be read in time are no verdict: the next apply reads them again.
func noManifestWarning(run transfer.UnfinishedRun, sourceBroker string) string {
	if !errors.Is(run.ManifestError, transfer.ErrNoManifest) {
		return fmt.Sprintf("The records of run %s could not be read (%v). Nothing was changed. Next: run terraform apply, which "+
			"reads them again and resumes the run once they are read; if the error says a record is not readable, consume that "+
			"record from queue %s on broker %q first, and apply then writes the manifest again from the run id and the configuration.",
			run.RunID, run.ManifestError, transfer.ManifestQueue(run.RunID), sourceBroker)
	}
	if run.Messages == 0 && errors.Is(run.ManifestError, transfer.ErrNoManifest) {
		return fmt.Sprintf("Run %s stopped before anything was staged, and has no readable manifest (%v). Next: run terraform "+
			"apply, which removes the run's queues (no message moved under it) and starts the transfer again as a new run.",
			run.RunID, run.ManifestError)
	}
	return fmt.Sprintf("Run %s has %d messages in its staging queue but no readable manifest (%v). Next: run terraform apply, "+
		"which writes the manifest again from the run id and the configuration and resumes the run; or return its messages "+
		"with an artemis_transfer_return resource with broker = %q and run_id = %q.", run.RunID, run.Messages, run.ManifestError,
		sourceBroker, run.RunID)
}
