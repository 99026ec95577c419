package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// Refusals of the transfer's own values, before any broker is asked. Each lands on the attribute
// at fault and names it in its summary as well ("Invalid transfer (batch_size)"), because
// Terraform shows only the line of an object such as target = {...}, not the attribute inside.

var _ resource.ResourceWithConfigValidators = (*queueTransferResource)(nil)

// Bounds of the tuning attributes: the engine's own (transfer.Options documents why).
const (
	maxBatchSize        = transfer.MaxBatchSize
	maxStagingChunkSize = transfer.MaxChunkSize
	minMaxInFlightBytes = transfer.MinMaxInFlightBytes
)

// invalidSummary is the summary of a refused value of attribute p.
func invalidSummary(p path.Path) string { return "Invalid transfer (" + p.String() + ")" }

// int64Range refuses a tuning value outside [min, max] (max 0: no upper bound), saying what to
// set instead and why the bound exists.
type int64Range struct {
	min, max, def int64
	why           string
}

func (v int64Range) Description(context.Context) string {
	if v.max == 0 {
		return fmt.Sprintf("at least %d", v.min)
	}
	return fmt.Sprintf("from %d to %d", v.min, v.max)
}

func (v int64Range) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v int64Range) ValidateInt64(ctx context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	n := req.ConfigValue.ValueInt64()
	if n >= v.min && (v.max == 0 || n <= v.max) {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, invalidSummary(req.Path),
		fmt.Sprintf("%s = %d is out of range: set it to a whole number %s, or leave it out for the default %d. %s",
			req.Path, n, v.Description(ctx), v.def, v.why))
}

// namedString runs framework validators and puts the attribute's name into their summaries.
type namedString struct{ inner []validator.String }

func (v namedString) Description(ctx context.Context) string {
	parts := make([]string, len(v.inner))
	for i, in := range v.inner {
		parts[i] = in.Description(ctx)
	}
	return strings.Join(parts, "; ")
}

func (v namedString) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v namedString) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	for _, in := range v.inner {
		var r validator.StringResponse
		in.ValidateString(ctx, req, &r)
		resp.Diagnostics.Append(renamed(req.Path, r.Diagnostics)...)
	}
}

// namedList is namedString for list attributes.
type namedList struct{ inner []validator.List }

func (v namedList) Description(ctx context.Context) string {
	parts := make([]string, len(v.inner))
	for i, in := range v.inner {
		parts[i] = in.Description(ctx)
	}
	return strings.Join(parts, "; ")
}

func (v namedList) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v namedList) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	for _, in := range v.inner {
		var r validator.ListResponse
		in.ValidateList(ctx, req, &r)
		resp.Diagnostics.Append(renamed(req.Path, r.Diagnostics)...)
	}
}

// renamed gives each error the summary invalidSummary of its own path (of p when it has none),
// keeping its detail.
func renamed(p path.Path, diags diag.Diagnostics) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range diags {
		at := p
		if wp, ok := d.(diag.DiagnosticWithPath); ok && !wp.Path().Equal(path.Empty()) {
			at = wp.Path()
		}
		if d.Severity() == diag.SeverityError {
			out.AddAttributeError(at, invalidSummary(at), d.Detail())
		} else {
			out.AddAttributeWarning(at, d.Summary()+" ("+at.String()+")", d.Detail())
		}
	}
	return out
}

// notRunQueue refuses a queue name under the staging prefix: those queues belong to a run.
type notRunQueue struct{}

func (notRunQueue) Description(context.Context) string {
	return "must not start with " + transfer.StagingPrefix
}

func (v notRunQueue) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (notRunQueue) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if detail := runQueueProblem(req.Path, req.ConfigValue.ValueString()); detail != "" {
		resp.Diagnostics.AddAttributeError(req.Path, invalidSummary(req.Path), detail)
	}
}

// runQueueProblem says why queue, the value of attribute p, cannot be a transfer's queue; empty
// when it can.
func runQueueProblem(p path.Path, queue string) string {
	if !strings.HasPrefix(queue, transfer.StagingPrefix) {
		return ""
	}
	return fmt.Sprintf("%s = %q names a queue of a transfer run (names starting with %q are a run's staging, "+
		"quarantine and manifest queues, and its canaries). Point %s at an application queue. To finish or return "+
		"the run that queue belongs to, import it (the data source artemis_orphaned_transfers lists it) or return "+
		"it with artemis_transfer_return.", p, queue, transfer.StagingPrefix, p)
}

// ConfigValidators refuses a transfer into its own source queue, named by the same broker key.
// (Two keys that reach the same broker node are found by the plan's preflight.)
func (r *queueTransferResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{sameQueueValidator{}}
}

type sameQueueValidator struct{}

func (sameQueueValidator) Description(context.Context) string {
	return "source and target must be different queues"
}

func (v sameQueueValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (sameQueueValidator) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var src, tgt types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("source"), &src)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("target"), &tgt)...)
	if resp.Diagnostics.HasError() {
		return
	}
	s, okS := endpointValues(src)
	t, okT := endpointValues(tgt)
	if okS && okT {
		addSameQueue(s, t, &resp.Diagnostics)
	}
}

// endpointValues reads broker and queue of a source or target object; false while either is
// null or unknown.
func endpointValues(o types.Object) (transfer.Endpoint, bool) {
	if o.IsNull() || o.IsUnknown() {
		return transfer.Endpoint{}, false
	}
	attrs := o.Attributes()
	broker, okB := attrs["broker"].(types.String)
	queue, okQ := attrs["queue"].(types.String)
	if !okB || !okQ || broker.IsNull() || broker.IsUnknown() || queue.IsNull() || queue.IsUnknown() {
		return transfer.Endpoint{}, false
	}
	return transfer.Endpoint{Broker: broker.ValueString(), Queue: queue.ValueString()}, true
}

// summarySameQueue is the summary the preflight gives when two broker keys reach one node.
const summarySameQueue = "Source and target are the same queue (target.queue)"

// addSameQueue refuses, on target.queue, a target that names the source queue of the same broker.
func addSameQueue(src, tgt transfer.Endpoint, diags *diag.Diagnostics) {
	if src.Broker != tgt.Broker || src.Queue != tgt.Queue {
		return
	}
	diags.AddAttributeError(path.Root("target").AtName("queue"), summarySameQueue,
		fmt.Sprintf("source and target both name queue %q on broker %q. A transfer into its own source would take the "+
			"selected messages off the queue and send them back to it, reordered and with new broker ids. Point "+
			"target.queue at another queue, or target.broker at another broker.", tgt.Queue, tgt.Broker))
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
		diags.AddAttributeError(path.Root("mode"), invalidSummary(path.Root("mode")),
			fmt.Sprintf("mode = %q is not supported: set mode = %q or %q, or leave it out (move).", spec.Mode, transfer.ModeMove, transfer.ModeCopy))
	}
	for _, ep := range []struct {
		name string
		e    transfer.Endpoint
	}{{"source", spec.Source}, {"target", spec.Target}} {
		for attr, value := range map[string]string{"broker": ep.e.Broker, "queue": ep.e.Queue} {
			p := path.Root(ep.name).AtName(attr)
			if value == "" {
				diags.AddAttributeError(p, invalidSummary(p), fmt.Sprintf("%s is empty: set it to the %s's %s.", p, ep.name, attr))
			}
		}
		p := path.Root(ep.name).AtName("queue")
		if detail := runQueueProblem(p, ep.e.Queue); detail != "" {
			diags.AddAttributeError(p, invalidSummary(p), detail)
		}
	}
	addSameQueue(spec.Source, spec.Target, diags)
	if spec.Selection.Filter != "" && len(spec.Selection.MessageIDs) > 0 {
		diags.AddAttributeError(path.Root("filter"), invalidSummary(path.Root("filter")),
			"filter and message_ids are both set: a transfer selects by one of them. Remove one.")
	}
	for i, id := range spec.Selection.MessageIDs {
		if strings.TrimSpace(id) == "" {
			p := path.Root("message_ids").AtListIndex(i)
			diags.AddAttributeError(p, invalidSummary(p), fmt.Sprintf("%s is empty: give a JMS message id (ID:<uuid>) or an AMQP message-id, or remove it.", p))
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
