package preflight

import (
	"fmt"
)

// selectionAttribute is the attribute that makes the selection.
func selectionAttribute(kind string) string {
	switch kind {
	case selectFilter:
		return "filter"
	case selectMessageIDs:
		return "message_ids"
	default:
		return ""
	}
}

// filterParses refuses a filter the source broker cannot parse.
func filterParses(f Facts) []Finding {
	if f.FilterError == "" {
		return nil
	}
	return []Finding{refuse("filter", summaryFilterInvalid,
		"Broker %q rejects the filter: %s. A filter is a Core filter expression (JMS selector syntax, "+
			"e.g. \"region = 'eu' AND priority > 4\"); fix it and plan again.",
		f.Source.Broker, f.FilterError)}
}

// unfinishedRun warns that apply resumes an earlier run instead of starting a new one.
func unfinishedRun(f Facts) []Finding {
	r := f.UnfinishedRun
	if r == nil {
		return nil
	}
	t0 := r.T0.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	return []Finding{warn("", summaryUnfinishedRun,
		"Run %s of this transfer is unfinished (%d messages staged since %s); apply resumes it with the same "+
			"start time, so its selection stays the one frozen at %s and messages produced since then stay on "+
			"the source.", r.RunID, r.Staged, t0, t0)}
}

// selectionSize reports how many messages the selection holds now.
func selectionSize(f Facts) []Finding {
	if f.SourceQueue == nil || f.FilterError != "" {
		return nil
	}
	attribute := selectionAttribute(f.SelectionKind)
	n := f.SelectionCount
	const live = "This is a live count read at plan time: apply takes what the selection holds when it runs."
	if n < 0 {
		return []Finding{warn(attribute, summarySelectionUnknown,
			"The source broker %q could not count the messages the %s selection holds on queue %q.",
			f.Source.Broker, selectionName(f.SelectionKind), f.Source.Queue)}
	}
	var summary, detail string
	switch {
	case f.SelectionKind == selectMessageIDs:
		atLeast := ""
		switch {
		case f.SelectionCountUpperBound:
			atLeast = "Up to "
		case f.SelectionCountCapped:
			atLeast = "At least "
		}
		summary = fmt.Sprintf("%s%d of the listed message ids are selected now", atLeast, n)
		detail = fmt.Sprintf("%s%d of the listed message ids are on queue %q of broker %q now; ids not on the "+
			"queue are not moved.%s%s %s", atLeast, n, f.Source.Queue, f.Source.Broker, headOnly(f), listLength(f), live)
	case f.SelectionCountCapped:
		summary = fmt.Sprintf("At least %d messages are selected now", n)
		detail = fmt.Sprintf("At least %d messages on queue %q of broker %q match the selection now.%s %s",
			n, f.Source.Queue, f.Source.Broker, headOnly(f), live)
	default:
		summary = fmt.Sprintf("%d messages are selected now", n)
		detail = fmt.Sprintf("%d messages on queue %q of broker %q match the selection now. %s",
			n, f.Source.Queue, f.Source.Broker, live)
	}
	if n == 0 && (f.SelectionKind == selectFilter || f.SelectionKind == selectMessageIDs) {
		// A filter or an id list that selects nothing now is worth a look: it may be wrong. An
		// empty queue moved whole is not: the source queue exists (else the plan refuses), and a
		// run that finds nothing completes having moved nothing, so there is nothing to act on.
		return []Finding{warn(attribute, summary, "%s", detail)}
	}
	return []Finding{note(attribute, summary, "%s", detail)}
}

// headOnly explains a capped count.
func headOnly(f Facts) string {
	if !f.SelectionCountCapped {
		return ""
	}
	return " The broker's filtered count examines only the first management-browse-page-size messages " +
		"(200 by default) of the queue, so more may match."
}

// listLength explains a count that is only the length of the id list.
func listLength(f Facts) string {
	if !f.SelectionCountUpperBound {
		return ""
	}
	return " The list is too long to count on the broker at plan time, so this is its length: ids not on the queue are in it."
}

func selectionName(kind string) string {
	if kind == "" {
		return selectWholeQueue
	}
	return kind
}

// selectionFrozenAtStart explains the producer-timestamp cut-off of whole-queue and filter
// selections; id selections are exact.
func selectionFrozenAtStart(f Facts) []Finding {
	if f.SelectionKind == selectMessageIDs {
		return nil
	}
	return []Finding{explain(note(selectionAttribute(f.SelectionKind), summarySelectionFrozen,
		"%s takes the messages whose producer timestamp (AMQTimestamp) is at or before the run's "+
			"start time t0; messages produced later stay on the source queue. A message from a producer whose clock "+
			"runs ahead carries a later timestamp and stays too, and an AMQP message sent without a "+
			"creation-time has timestamp 0 and is always included. Use message_ids to select exact messages.",
		selectionPhrase(f.SelectionKind)))}
}

// selectionPhrase names a whole-queue or filter selection at the start of a sentence.
func selectionPhrase(kind string) string {
	if kind == selectFilter {
		return "A filter selection"
	}
	return "A whole-queue selection"
}

// sourceConsumers warns that messages in delivery to the source's consumers are skipped.
func sourceConsumers(f Facts) []Finding {
	q := f.SourceQueue
	if q == nil || q.ConsumerCount <= 0 {
		return nil
	}
	return []Finding{warn("source.queue", summarySourceConsumers,
		"Queue %q on broker %q has %d consumer(s) (%d message(s) in delivery now). Messages being delivered "+
			"to them when staging runs are skipped and stay on the source unless they are redelivered; a "+
			"later apply takes those. Stop the consumers first for a complete move.",
		q.Name, f.Source.Broker, q.ConsumerCount, q.DeliveringCount)}
}

// scheduledMessages notes that scheduled messages move too.
func scheduledMessages(f Facts) []Finding {
	if f.ScheduledMessages <= 0 {
		return nil
	}
	return []Finding{warn("source.queue", summaryScheduledIncluded,
		"Queue %q on broker %q holds %d scheduled message(s). Those the selection matches are staged with "+
			"their delivery time, and the broker delivers them to the relay only when it comes: the apply waits "+
			"for the latest of them (its progress log says so), then relays them to the target. A scheduled message "+
			"that also carries an expiry arrives without it (the run cannot read the expiry of a scheduled message).",
		f.Source.Queue, f.Source.Broker, f.ScheduledMessages)}
}

// expiringMessages warns when the selected messages' expiry does not survive the transfer.
func expiringMessages(f Facts) []Finding {
	if f.ExpiringMessages <= 0 || f.ExpiryPreserved {
		return nil
	}
	return []Finding{warn(selectionAttribute(f.SelectionKind), summaryExpiryLost,
		"%d selected message(s) on queue %q carry an expiry. The broker-side move into staging resets it, so "+
			"they arrive on the target without one and will not expire there.",
		f.ExpiringMessages, f.Source.Queue)}
}
