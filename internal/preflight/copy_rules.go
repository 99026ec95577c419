package preflight

import "time"

// Summaries of a copy's own findings.
const (
	summaryCopyIdentity        = "How a copy tells messages apart"
	summaryCopySourceConsumers = "Source queue has consumers: messages in delivery are not copied"
	summaryCopyScheduled       = "Scheduled messages are not copied"
	summaryCopyUnfinished      = "An unfinished copy of this transfer will be resumed"
)

// CopyFacts are what a copy's own findings need, on top of Facts.
type CopyFacts struct {
	// Sampled is how many selected messages the plan browsed (at most its sample size); -1 when
	// it could not browse. WithoutMessageID of them carry no message-id, Indistinguishable are
	// identical in identity to another of them.
	Sampled, WithoutMessageID, Indistinguishable int
	// Consumers and Delivering are the source queue's consumers and messages in delivery now.
	Consumers  int
	Delivering int64
	// Scheduled is how many scheduled messages the source queue holds; -1 unknown.
	Scheduled int64
	// Unfinished is the unfinished copy of this transfer in the ledger; nil for none.
	Unfinished *UnfinishedCopy
}

// UnfinishedCopy is the unfinished copy of a transfer the ledger records.
type UnfinishedCopy struct {
	RunID string
	// T0 is the run's start time, which freezes its selection.
	T0     time.Time
	Status string
	// Copied is how many messages the run has recorded as copied, by every process.
	Copied int64
}

// CheckCopy applies the rules of a copy: every rule of Check except the two whose wording is a
// move's (sourceConsumers, scheduledMessages: a copy says them in its own words), then the
// copy's own warnings; errors first, then warnings, as Check orders them.
func CheckCopy(f Facts, c CopyFacts) []Finding {
	return bySeverity(append(applyRules(f, true), copyFindings(f.Source, c)...))
}

// copyFindings are the copy's own findings: all warnings.
func copyFindings(source Endpoint, c CopyFacts) []Finding {
	var out []Finding
	if r := c.Unfinished; r != nil {
		t0 := r.T0.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		out = append(out, warn("", summaryCopyUnfinished,
			"Copy run %s of this transfer is unfinished (%d messages copied since %s, status %s); apply resumes it with the same "+
				"start time, so its selection stays the one frozen at %s, and skips what the ledger records as copied.",
			r.RunID, r.Copied, t0, r.Status, t0))
	}
	switch {
	case c.Sampled < 0:
		out = append(out, warn("source.queue", summaryCopyIdentity,
			"The plan could not browse queue %q on broker %q to count the selected messages without a message-id. A copy "+
				"identifies each message by its properties (message-id, creation-time, ...), application properties, body, "+
				"durability, priority and annotations: messages identical in all of those are copied once.", source.Queue, source.Broker))
	case c.Sampled > 0:
		out = append(out, warn("source.queue", summaryCopyIdentity,
			"Over AMQP the broker shows no id of its own for a browsed message, so a copy identifies each message by its "+
				"properties (message-id, creation-time, ...), application properties, body, durability, priority and annotations, "+
				"and records that identity in the "+
				"ledger. Of the first %d selected messages on queue %q, %d carry no message-id and %d are identical to another "+
				"of them. Messages identical in all of that cannot be told apart: the target gets one of them, and the apply's "+
				"result counts the others. Producers that set a unique message-id (every JMS client does) never meet this.",
			c.Sampled, source.Queue, c.WithoutMessageID, c.Indistinguishable))
	}
	if c.Consumers > 0 {
		out = append(out, warn("source.queue", summaryCopySourceConsumers,
			"Queue %q on broker %q has %d consumer(s) (%d message(s) in delivery now). A copy browses the queue and takes "+
				"nothing from it, so the consumers keep receiving every message once; but a message being delivered to a "+
				"consumer when the browse passes it is not seen, and a message a consumer acknowledges before the browse "+
				"reaches it is gone: the copy holds the selected messages that were on the queue, and not in delivery, when "+
				"the browse passed. Stop the consumers first for a complete copy.",
			source.Queue, source.Broker, c.Consumers, c.Delivering))
	}
	if c.Scheduled > 0 {
		out = append(out, warn("source.queue", summaryCopyScheduled,
			"Queue %q on broker %q holds %d scheduled message(s). A browse does not see a scheduled message before its "+
				"delivery time, so a copy does not copy it; apply the copy again after that time to copy it.",
			source.Queue, source.Broker, c.Scheduled))
	}
	return out
}
