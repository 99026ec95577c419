// Package validators holds the schema validators of the artemis_queue_transfer resource and of
// the data sources' arguments, which therefore fail at plan rather than at read. Each
// refusal lands on the attribute at fault and names it in its summary as well ("Invalid transfer
// (batch_size)"), because Terraform shows only the line of an object such as target = {...},
// not the attribute inside. Where terraform-plugin-framework-validators has the check, it
// decides, and these validators only word the refusal.
//
//	doc.go         this map
//	named.go       NamedString, NamedList: library validators with the attribute named in their summaries
//	int64.go       Int64Range, PositiveRate: tuning values, refused with what to set and why
//	queue.go       NotRunQueue, RunQueueProblem: a run's own queues are no transfer's endpoint
//	same_queue.go  DifferentQueues, AddSameQueue: a transfer into its own source queue
//	regexp.go      RE2Pattern: a data source's regular expression, compiled at plan
package validators

import "github.com/hashicorp/terraform-plugin-framework/path"

// InvalidSummary is the summary of a refused value of attribute p.
func InvalidSummary(p path.Path) string { return "Invalid transfer (" + p.String() + ")" }
