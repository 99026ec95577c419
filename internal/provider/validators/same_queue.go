package validators

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// DifferentQueues refuses a transfer into its own source queue, named by the same broker key.
// (Two keys that reach the same broker node are found by the plan's preflight.)
func DifferentQueues() resource.ConfigValidator { return differentQueues{} }

type differentQueues struct{}

func (differentQueues) Description(context.Context) string {
	return "source and target must be different queues"
}

func (v differentQueues) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (differentQueues) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var src, tgt types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("source"), &src)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("target"), &tgt)...)
	if resp.Diagnostics.HasError() {
		return
	}
	s, okS := endpointValues(src)
	t, okT := endpointValues(tgt)
	if okS && okT {
		AddSameQueue(s, t, &resp.Diagnostics)
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

// summarySameQueue is the summary of a transfer into its own source queue, on target.queue; the
// preflight gives the same when two broker keys reach one node.
const summarySameQueue = "Source and target are the same queue (target.queue)"

// AddSameQueue refuses, on target.queue, a target that names the source queue of the same broker.
func AddSameQueue(src, tgt transfer.Endpoint, diags *diag.Diagnostics) {
	if src.Broker != tgt.Broker || src.Queue != tgt.Queue {
		return
	}
	diags.AddAttributeError(path.Root("target").AtName("queue"), summarySameQueue,
		fmt.Sprintf("source and target both name queue %q on broker %q. A transfer into its own source would take the "+
			"selected messages off the queue and send them back to it, reordered and with new broker ids. Point "+
			"target.queue at another queue, or target.broker at another broker.", tgt.Queue, tgt.Broker))
}
