package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// NotRunQueue refuses a queue name under the staging prefix: those queues belong to a run.
func NotRunQueue() validator.String { return notRunQueue{} }

type notRunQueue struct{}

func (notRunQueue) Description(context.Context) string {
	return "must not start with " + transfer.StagingPrefix
}

func (v notRunQueue) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (notRunQueue) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if detail := RunQueueProblem(req.Path, req.ConfigValue.ValueString()); detail != "" {
		resp.Diagnostics.AddAttributeError(req.Path, InvalidSummary(req.Path), detail)
	}
}

// RunQueueProblem says why queue, the value of attribute p, cannot be a transfer's queue; empty
// when it can.
func RunQueueProblem(p path.Path, queue string) string {
	if !strings.HasPrefix(queue, transfer.StagingPrefix) {
		return ""
	}
	return fmt.Sprintf("%s = %q names a queue of a transfer run (names starting with %q are a run's staging, "+
		"quarantine and manifest queues, and its canaries). Point %s at an application queue. To finish or return "+
		"the run that queue belongs to, import it (the data source artemis_orphaned_transfers lists it) or return "+
		"it with artemis_transfer_return.", p, queue, transfer.StagingPrefix, p)
}
