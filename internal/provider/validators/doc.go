// Package validators holds the schema validators of the artemis_queue_transfer resource, of
// the data sources' arguments and of the provider block, which therefore fail at plan (the
// provider block at terraform validate) rather than at read or configure. Each refusal lands
// on the attribute at fault and names it in its summary as well ("Invalid transfer
// (batch_size)"), because Terraform shows only the line of an object such as target = {...},
// not the attribute inside; the provider block's refusals (Rule) keep the summaries its
// Configure has always used and lead the detail with the path instead. Where
// terraform-plugin-framework-validators has the check, it decides, and these validators only
// word the refusal.
//
// Each validator is a small unexported struct behind a constructor that returns the framework's
// validator interface. Validators read only the configuration; they never reach a broker, so a
// check that needs one is a plan check of the resource instead. The prefix of a run's own
// queues comes from internal/transfer, the one package that names them, and the refusal texts
// shared with plan checks (InvalidSummary, RunQueueProblem, AddSameQueue) are exported so that
// both say the same.
package validators

import "github.com/hashicorp/terraform-plugin-framework/path"

// InvalidSummary is the summary of a refused value of attribute p.
func InvalidSummary(p path.Path) string { return "Invalid transfer (" + p.String() + ")" }
