package provider

// Plan warnings for in-place updates of an artemis_queue after which the broker drops
// messages: it changes these attributes on the live queue, and each changes which messages the
// queue keeps from then on.

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// warnDroppingUpdates adds a warning for each planned in-place change of the queue after which
// the broker drops messages, with the queue's depth when the broker answers.
func (r *queueResource) warnDroppingUpdates(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, plan queueResourceModel) {
	var state queueResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || replaced(state, plan) || !droppingUpdate(state, plan) {
		return
	}
	var live *artemis.QueueInfo
	var readErr error
	var ignored diag.Diagnostics // a broker that cannot be reached at plan only costs the figures
	if ctx, client := namedBrokerClient(ctx, r.runtime, plan.Broker, &ignored); client != nil {
		q, err := client.Queue(ctx, plan.Name.ValueString())
		if err == nil {
			live = &q
		}
		readErr = err
	}
	resp.Diagnostics.Append(droppingUpdateWarnings(state, plan, live, readErr)...)
}

// replaced reports whether the plan replaces the queue, which its delete's own checks guard.
func replaced(state, plan queueResourceModel) bool {
	for _, pair := range [][2]fmt.Stringer{
		{state.Broker, plan.Broker}, {state.Name, plan.Name}, {state.Address, plan.Address}, {state.RoutingType, plan.RoutingType},
		{state.Durable, plan.Durable}, {state.LastValue, plan.LastValue}, {state.LastValueKey, plan.LastValueKey}, {state.AutoDelete, plan.AutoDelete},
	} {
		if pair[0].String() != pair[1].String() {
			return true
		}
	}
	return false
}

// droppingUpdate reports whether the plan changes in place an attribute after which the broker
// may drop messages.
func droppingUpdate(state, plan queueResourceModel) bool {
	return len(droppingUpdateWarnings(state, plan, nil, nil)) > 0
}

// droppingUpdateWarnings are the warnings for the planned in-place changes from state to plan
// after which the broker drops messages (each checked on Artemis 2.31 and 2.40). live is the
// queue as the broker reads now, nil when unread (readErr says why, when it was tried).
func droppingUpdateWarnings(state, plan queueResourceModel, live *artemis.QueueInfo, readErr error) diag.Diagnostics {
	var diags diag.Diagnostics
	queue := fmt.Sprintf("queue %q on broker %q", plan.Name.ValueString(), plan.Broker.ValueString())
	holds := "the messages it holds"
	if live != nil {
		holds = fmt.Sprintf("the %d message(s) it holds", live.MessageCount)
	}
	known := func(v interface{ IsUnknown() bool }) bool { return !v.IsUnknown() }

	if known(plan.RingSize) && known(state.RingSize) && plan.RingSize.ValueInt64() != state.RingSize.ValueInt64() && plan.RingSize.ValueInt64() >= 0 {
		ring := plan.RingSize.ValueInt64()
		switch {
		case live != nil && live.MessageCount > ring:
			diags.AddAttributeWarning(path.Root("ring_size"), "The queue holds more messages than the new ring size",
				fmt.Sprintf("ring_size becomes %d while %s holds %d message(s). The broker keeps them at the update, but from then on removes "+
					"the oldest for each message it takes, until consumers bring the queue below %d: %d stored message(s) go that way "+
					"before the queue is within its ring. To keep them, consume or move them first, or set ring_size to at least %d.",
					ring, queue, live.MessageCount, ring, live.MessageCount-ring, live.MessageCount))
		case live == nil && readErr != nil:
			diags.AddAttributeWarning(path.Root("ring_size"), "The queue's depth could not be read for the new ring size",
				fmt.Sprintf("ring_size becomes %d, and %s could not be read at plan (%v). If it holds more than %d messages, the broker "+
					"removes the oldest for each message it takes from then on, until consumers bring it below %d. Check its depth before applying.",
					ring, queue, readErr, ring, ring))
		}
	}
	if known(plan.Enabled) && known(state.Enabled) && state.Enabled.ValueBool() && !plan.Enabled.ValueBool() {
		diags.AddAttributeWarning(path.Root("enabled"), "A disabled queue takes no new message",
			fmt.Sprintf("With enabled = false, messages sent to address %q are no longer stored in %s: the broker routes them to the "+
				"address's other queues, or drops them, while accepting them from their producers, when no other queue takes them. "+
				"%s stay. Stop the producers first, or give the address another queue for them, or keep enabled = true.",
				plan.Address.ValueString(), queue, upperFirst(holds)))
	}
	if known(plan.PurgeOnNoConsumers) && known(state.PurgeOnNoConsumers) && !state.PurgeOnNoConsumers.ValueBool() && plan.PurgeOnNoConsumers.ValueBool() {
		consumers := ""
		if live != nil {
			consumers = fmt.Sprintf(" It has %d consumer(s) now.", live.ConsumerCount)
			if live.ConsumerCount == 0 {
				consumers = " It has no consumer now, so it drops every message sent to it from the update on."
			}
		}
		diags.AddAttributeWarning(path.Root("purge_on_no_consumers"), "The queue will drop messages when it has no consumer",
			fmt.Sprintf("With purge_on_no_consumers = true, %s drops each message sent to it while it has no consumer, and deletes %s "+
				"when its last consumer leaves (the broker keeps them at the update).%s To keep them, consume or move them first, or keep "+
				"purge_on_no_consumers = false.", queue, holds, consumers))
	}
	if known(plan.Filter) && known(state.Filter) && plan.Filter.ValueString() != state.Filter.ValueString() && plan.Filter.ValueString() != "" {
		diags.AddAttributeWarning(path.Root("filter"), "Messages the new filter does not match are no longer stored",
			fmt.Sprintf("With filter %q, messages sent to address %q that do not match it are no longer stored in %s: the broker routes "+
				"them to the address's other queues, or drops them when no other queue takes them (Artemis 2.31 still stores those sent "+
				"to the queue by its fully qualified name). %s stay, whether they match or not. Give the address a queue for the other "+
				"messages first, or keep the filter.", plan.Filter.ValueString(), plan.Address.ValueString(), queue, upperFirst(holds)))
	}
	return diags
}

// upperFirst returns s with its first letter in upper case (s is ASCII here).
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
