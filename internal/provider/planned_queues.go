package provider

// What this plan creates on the brokers, as far as a transfer planned after it needs to know:
// a transfer into a queue that an artemis_queue of the same configuration creates cannot be
// checked against the queue at plan (it does not exist yet), but it is not a mistake either.

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// plannedQueues holds the queues this configured provider has planned to create, by broker
// key and queue name. Terraform plans a resource after the ones it refers to, so a transfer
// whose target.queue refers to an artemis_queue (or that lists it in depends_on) is planned
// after that queue is.
type plannedQueues struct {
	mu     sync.Mutex
	queues map[preflight.Endpoint]bool
}

// add records that this plan creates queue on broker.
func (p *plannedQueues) add(broker, queue string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queues == nil {
		p.queues = map[preflight.Endpoint]bool{}
	}
	p.queues[preflight.Endpoint{Broker: broker, Queue: queue}] = true
}

// has reports whether this plan creates queue on broker.
func (p *plannedQueues) has(broker, queue string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queues[preflight.Endpoint{Broker: broker, Queue: queue}]
}

// ModifyPlan records a queue this plan creates (or replaces), so that a transfer into it is
// checked at apply, once it exists, rather than refused at plan; and it warns of in-place
// updates after which the broker drops messages.
func (r *queueResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.runtime == nil {
		return // a destroy
	}
	var plan queueResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Broker.IsUnknown() || plan.Name.IsUnknown() {
		return
	}
	r.runtime.planned.add(plan.Broker.ValueString(), plan.Name.ValueString())
	if !req.State.Raw.IsNull() {
		r.warnDroppingUpdates(artemis.WithSnapshotReads(ctx, planSnapshotMaxAge), req, resp, plan)
	}
}

// deferPlannedTargets turns the refusal of a missing target queue that this plan creates into
// a note that apply checks it: the rules a target must pass run at apply, once the queue
// exists, before anything moves. A note, logged at INFO, not a warning: the queue is missing
// because the configuration creates it, as the reviewer asked, and a migration of 200 queues
// would otherwise print 200 warnings that ask nothing of anyone.
func deferPlannedTargets(findings []preflight.Finding, target preflight.Endpoint, planned *plannedQueues) []preflight.Finding {
	if !planned.has(target.Broker, target.Queue) {
		return findings
	}
	out := make([]preflight.Finding, 0, len(findings))
	for _, f := range findings {
		if preflight.IsTargetMissing(f) {
			f = preflight.Finding{Severity: preflight.Note, Attribute: f.Attribute,
				Summary: "Target queue is created by this apply",
				Detail: "Queue " + target.Queue + " on broker " + target.Broker + " does not exist yet: an artemis_queue of this " +
					"configuration creates it. Apply checks it against every rule a target must pass once it exists, " +
					"before anything moves, and refuses the transfer there if it would lose messages."}
		}
		out = append(out, f)
	}
	return out
}
