package preflight

import (
	"fmt"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Summaries are fixed per rule so a caller (and a test) can recognise a finding; the values
// go in Detail. Only the selection-size warning carries its count in the summary.
const (
	summarySourceMissing      = "Source queue does not exist"
	summaryTargetMissing      = "Target queue does not exist"
	summarySameQueue          = "Source and target are the same queue"
	summaryFilterInvalid      = "The broker rejects the filter"
	summaryTargetDisabled     = "Target queue is disabled"
	summaryTargetFiltered     = "Target queue has a filter"
	summaryTargetLastValue    = "Target queue is a last-value queue"
	summaryTargetPurges       = "Target queue drops messages when it has no consumers"
	summaryTargetNotDurable   = "Target queue is not durable"
	summaryTargetAutoDeleted  = "Target queue is deleted with its messages when its consumers leave"
	summaryTargetDiverted     = "Target address diverts messages away from the queue"
	summaryTargetExpires      = "Target gives messages an expiry and deletes them when it passes"
	summaryTargetGivesExpiry  = "Target gives messages an expiry"
	summaryNotPersistent      = "Target broker does not persist messages"
	summaryIDCacheForgotten   = "Target broker forgets duplicate ids when it restarts"
	summaryRingTooSmall       = "Target ring queue would remove messages"
	summaryDropWhenFull       = "Target drops messages when full"
	summaryDropWhenPageFull   = "Target drops messages when its paging limit is reached"
	summaryIDCacheOff         = "Duplicate detection is off on the target address"
	summaryIDCacheSmall       = "Target duplicate-id cache is smaller than four times the batch size"
	summaryIDCacheShared      = "Target duplicate-id cache is shared with transfers sending to the queue now"
	summaryDedupDisabled      = "Target stores duplicate AMQP messages"
	summaryDedupUnknown       = "Duplicate detection on the target is unverified"
	summaryRelayDiscarded     = "Target discards what the relay sends into a queue of this routing type"
	summaryPermission         = "The broker user lacks a permission"
	summaryConnection         = "Cannot connect to the broker over AMQP"
	summaryWriteChecksSkipped = "Apply proves what this plan could not without writing"
	summaryUnfinishedRun      = "An unfinished run of this transfer will be resumed"
	summarySelectionUnknown   = "The number of selected messages is unknown"
	summarySelectionFrozen    = "The selection is frozen at the run's start by producer timestamp"
	summarySourceConsumers    = "Source queue has consumers"
	summaryScheduledIncluded  = "Scheduled messages are included"
	summaryExpiryLost         = "Selected messages lose their expiry"
	summaryExpiryDropped      = "Messages that expire on the target are dropped"
	summaryAMQPForm           = "Messages arrive in their AMQP 1.0 form"
	summaryTargetNearlyFull   = "Target is nearly full: the run will wait for space"
	summaryBrokerTooOld       = "The broker's Artemis version is older than the provider supports"
)

// The oldest Artemis release the provider supports: the oldest whose distribution Maven Central
// serves, and the oldest make test-versions runs transfers against (docs/guides/supported-versions.md).
const (
	minimumArtemisVersion = "2.18.0"
	minimumArtemisMajor   = 2
	minimumArtemisMinor   = 18
)

func refuse(attribute, summary, detail string, args ...any) Finding {
	return Finding{Severity: Error, Attribute: attribute, Summary: summary, Detail: fmt.Sprintf(detail, args...)}
}

func warn(attribute, summary, detail string, args ...any) Finding {
	return Finding{Severity: Warning, Attribute: attribute, Summary: summary, Detail: fmt.Sprintf(detail, args...)}
}

func note(attribute, summary, detail string, args ...any) Finding {
	return Finding{Severity: Note, Attribute: attribute, Summary: summary, Detail: fmt.Sprintf(detail, args...)}
}

// brokersSupported refuses a source or target broker older than minimumArtemisVersion: its
// management operations and AMQP behaviour are untested, so a transfer could fail half way or
// lose what it was meant to keep. A version the broker reports in a form that does not parse is
// left to the other rules.
func brokersSupported(f Facts) []Finding {
	var out []Finding
	for _, side := range []struct {
		attribute, broker string
		info              artemis.BrokerInfo
	}{
		{"source.broker", f.Source.Broker, f.SourceBroker},
		{"target.broker", f.Target.Broker, f.TargetBroker},
	} {
		if side.attribute == "target.broker" && side.broker == f.Source.Broker {
			break // one broker at both ends: said once, on the source
		}
		v := side.info.Version
		if !artemis.VersionAtLeast(v, 0, 0) || artemis.VersionAtLeast(v, minimumArtemisMajor, minimumArtemisMinor) {
			continue
		}
		out = append(out, refuse(side.attribute, summaryBrokerTooOld,
			"Broker %q runs Artemis %s; the provider supports Artemis %s and later. Older brokers differ in the "+
				"management operations and AMQP behaviour a transfer relies on and are not tested, so nothing was "+
				"transferred. Upgrade broker %q to Artemis %s or later, or point %s at another broker, then plan again.",
			side.broker, v, minimumArtemisVersion, side.broker, minimumArtemisVersion, side.attribute))
	}
	return out
}

// queuesExist refuses a missing source or target queue.
func queuesExist(f Facts) []Finding {
	var out []Finding
	if f.SourceQueue == nil {
		out = append(out, refuse("source.queue", summarySourceMissing,
			"Queue %q does not exist on broker %q, so there is nothing to move. Check the queue name "+
				"(names are case-sensitive) and the broker, then plan again.",
			f.Source.Queue, f.Source.Broker))
	}
	if f.TargetQueue == nil {
		out = append(out, refuse("target.queue", summaryTargetMissing,
			"Queue %q does not exist on broker %q. The transfer sends to an existing queue by its fully "+
				"qualified name and does not create it: a queue the broker created on first send would take "+
				"its shape from address-settings defaults and could be deleted when empty. Create the queue "+
				"on broker %q, then plan again.",
			f.Target.Queue, f.Target.Broker, f.Target.Broker))
	}
	return out
}

// notSameQueue refuses a target that is the source queue itself: the same broker node (or the
// same configured broker) and the same queue name.
func notSameQueue(f Facts) []Finding {
	if f.Source.Queue != f.Target.Queue {
		return nil
	}
	sameNode := f.SourceBroker.NodeID != "" && f.SourceBroker.NodeID == f.TargetBroker.NodeID
	if !sameNode && f.Source.Broker != f.Target.Broker {
		return nil
	}
	return []Finding{refuse("target.queue", summarySameQueue,
		"Source %s/%s and target %s/%s name queue %q on the same broker node (node id %q). A transfer "+
			"into its own source would take the selected messages off the queue and send them back to it, "+
			"reordered and with new broker ids. Point target.queue at another queue, or target.broker at "+
			"another broker.",
		f.Source.Broker, f.Source.Queue, f.Target.Broker, f.Target.Queue, f.Target.Queue, f.TargetBroker.NodeID)}
}

// explain marks a warning as an explanation, the same for every transfer of its kind.
func explain(f Finding) Finding {
	f.Explanation = true
	return f
}

// amqpForm notes that the relay speaks AMQP 1.0.
func amqpForm(f Facts) []Finding {
	return []Finding{explain(note("", summaryAMQPForm,
		"The relay consumes from broker %q and sends to broker %q over AMQP 1.0. Messages produced with "+
			"Core, OpenWire, STOMP or MQTT arrive on the target in the AMQP form the source broker converts "+
			"them to; the JMS message type of Core JMS messages is kept.",
		f.Source.Broker, f.Target.Broker))}
}

// detailOrNone quotes a probe's detail, or says there was none.
func detailOrNone(detail string) string {
	if detail == "" {
		return "no detail"
	}
	return detail
}

// IsTargetMissing reports whether f is the refusal of a target queue that does not exist.
func IsTargetMissing(f Finding) bool {
	return f.Severity == Error && f.Attribute == "target.queue" && f.Summary == summaryTargetMissing
}
