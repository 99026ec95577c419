package preflight

import (
	"fmt"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// nearlyFullPercent is the address usage from which a BLOCK or FAIL target is expected to make
// the relay wait.
const nearlyFullPercent = 90

// targetQueueKeepsMessages refuses a target queue whose own shape discards, replaces or removes
// messages that the broker has already reported accepted.
func targetQueueKeepsMessages(f Facts) []Finding {
	q := f.TargetQueue
	if q == nil {
		return nil
	}
	where := fmt.Sprintf("Target queue %q on broker %q", q.Name, f.Target.Broker)
	var out []Finding
	if !q.Enabled {
		out = append(out, refuse("target.queue", summaryTargetDisabled,
			"%s is disabled (enabled=false): the broker routes nothing to it, so every message sent to "+
				"%s is discarded while the sender is told it was accepted. Enable the queue or choose another "+
				"target queue.", where, q.FQQN()))
	}
	if q.Filter != "" {
		dla := "discards it"
		if s := f.TargetSettings; s.SendToDLAOnNoRoute && s.DeadLetterAddress != "" {
			dla = fmt.Sprintf("sends it to the dead-letter address %q (send-to-dla-on-no-route)", s.DeadLetterAddress)
		}
		out = append(out, refuse("target.queue", summaryTargetFiltered,
			"%s has the filter %q. A message sent to %s that does not match it reaches no queue, and "+
				"the broker %s while still reporting it accepted. Choose a target queue without a filter, "+
				"or recreate this one without it.", where, q.Filter, q.FQQN(), dla))
	}
	if q.IsLastValue() {
		// The broker acts on the key alone: 2.40 reports last-value=false for a queue created
		// with only last-value-key, and still replaces messages in it.
		how, key := "is a last-value queue (last-value=true, no last-value-key)", "_AMQ_LVQ_NAME"
		if q.LastValueKey != "" {
			how, key = fmt.Sprintf("is a last-value queue: it has last-value-key %q (last-value=%t; the key "+
				"alone makes it one)", q.LastValueKey, q.LastValue), q.LastValueKey
		}
		out = append(out, refuse("target.queue", summaryTargetLastValue,
			"%s %s. A message replaces the queued message that has the same value of property %q, so "+
				"moved messages that share a value of %q with each other or with queued messages are lost "+
				"while the broker reports each accepted. Choose a target queue created without last-value "+
				"and without last-value-key.", where, how, key, key))
	}
	if q.PurgeOnNoConsumers {
		out = append(out, refuse("target.queue", summaryTargetPurges,
			"%s is purge-on-no-consumers and has %d consumer(s) now: whenever its last consumer leaves, "+
				"the broker purges it and drops messages routed to it until a consumer attaches, and "+
				"consumers can leave at any moment of a run. Choose a target queue without "+
				"purge-on-no-consumers.", where, q.ConsumerCount))
	}
	if !q.Durable {
		out = append(out, refuse("target.queue", summaryTargetNotDurable,
			"%s is not durable (durable=false): the broker keeps its messages in memory only, so every "+
				"moved message is lost when the target broker restarts, after the source has let it go. "+
				"Choose a durable target queue, or recreate this one with durable=true.", where))
	}
	if s := f.TargetSettings; q.AutoDelete && s.AutoDeleteQueuesMessageCount < 0 {
		out = append(out, refuse("target.queue", summaryTargetAutoDeleted,
			"%s is auto-delete (auto-created), and address %q has auto-delete-queues-message-count %d: "+
				"%d ms after its last consumer leaves the broker deletes the queue together with every message "+
				"in it, and the queue takes this setting when it is created. Create the target queue "+
				"explicitly (auto-delete=false), or set auto-delete-queues-message-count to 0 and recreate "+
				"the queue.", where, q.Address, s.AutoDeleteQueuesMessageCount, s.AutoDeleteQueuesDelay))
	}
	// Artemis treats every ring size other than -1 as a ring; QueueInfo reports -1 for none.
	if q.RingSize >= 0 {
		if finding, ok := ringOverflow(f, where); ok {
			out = append(out, finding)
		}
	}
	return out
}

// ringOverflow refuses a ring target unless the selection provably fits: a full ring removes its
// oldest message for each new one.
func ringOverflow(f Facts, where string) (Finding, bool) {
	q, n := f.TargetQueue, f.SelectionCount
	const why = "When a ring queue is full the broker removes its oldest message for each new one, so " +
		"moved or already queued messages would be lost."
	need := n + q.MessageCount
	switch {
	case n < 0:
		return refuse("target.queue", summaryRingTooSmall,
			"%s is a ring queue of size %d holding %d message(s), and the number of selected messages is "+
				"unknown, so the transfer cannot prove they fit. %s Make the selection countable, raise the "+
				"ring size, or choose a target queue that is not a ring.", where, q.RingSize, q.MessageCount, why), true
	case need > q.RingSize:
		atLeast := ""
		if f.SelectionCountCapped {
			atLeast = "at least "
		}
		return refuse("target.queue", summaryRingTooSmall,
			"%s is a ring queue of size %d holding %d message(s); %s%d selected message(s) would make %s%d, "+
				"%s%d more than the ring holds. %s Raise the ring size to at least %d, drain the target "+
				"first, narrow the selection, or choose a target queue that is not a ring.",
			where, q.RingSize, q.MessageCount, atLeast, n, atLeast, need, atLeast, need-q.RingSize, why, need), true
	case f.SelectionCountCapped:
		return refuse("target.queue", summaryRingTooSmall,
			"%s is a ring queue of size %d holding %d message(s), and at least %d messages are selected "+
				"(the broker counts filtered messages at the head of the queue only), so the transfer cannot prove they fit. %s Raise the ring "+
				"size, narrow the selection, or choose a target queue that is not a ring.",
			where, q.RingSize, q.MessageCount, n, why), true
	}
	return Finding{}, false
}

// targetAddressKeepsMessages refuses a target address whose settings drop messages once a
// limit is reached, full or not now: other producers and the transfer itself fill it.
func targetAddressKeepsMessages(f Facts) []Finding {
	q := f.TargetQueue
	if q == nil {
		return nil
	}
	s := f.TargetSettings
	var out []Finding
	if strings.EqualFold(s.AddressFullPolicy, "DROP") {
		out = append(out, refuse("target.queue", summaryDropWhenFull,
			"Address %q of target queue %q on broker %q has address-full-policy DROP (max-size-bytes %d, "+
				"max-size-messages %d; %s). Once the address or the broker's global limit is full, the broker "+
				"silently drops every message sent to it while still reporting it accepted, so the transfer "+
				"would remove messages from the source that never reach the target. Set the address's "+
				"address-full-policy to PAGE, BLOCK or FAIL (the transfer waits on BLOCK and FAIL), or "+
				"choose another target.",
			q.Address, q.Name, f.Target.Broker, s.MaxSizeBytes, s.MaxSizeMessages, usageNow(s, f.TargetUsage)))
	}
	pageLimited := s.PageLimitBytes > 0 || s.PageLimitMessages > 0
	if strings.EqualFold(s.AddressFullPolicy, "PAGE") && pageLimited && strings.EqualFold(s.PageFullPolicy, "DROP") {
		out = append(out, refuse("target.queue", summaryDropWhenPageFull,
			"Address %q of target queue %q on broker %q pages when full, with page-limit-bytes %d, "+
				"page-limit-messages %d and page-full-policy DROP. Once the paging limit is reached the broker "+
				"silently drops every message sent to it while still reporting it accepted. Set "+
				"page-full-policy to FAIL or BLOCK, remove the page limits, or choose another target.",
			q.Address, q.Name, f.Target.Broker, s.PageLimitBytes, s.PageLimitMessages))
	}
	return out
}

// targetNotDiverted refuses a target address with an exclusive divert: the broker routes a
// matching message to the divert's forwarding address instead, even one sent to the queue's
// fully qualified name. A non-exclusive divert leaves the queue its messages (2.40 applies one
// only to sends to the address, not to the fully qualified name).
func targetNotDiverted(f Facts) []Finding {
	q := f.TargetQueue
	if q == nil {
		return nil
	}
	var out []Finding
	for _, d := range f.TargetDiverts {
		if !d.Exclusive {
			continue
		}
		which := "every message"
		if d.Filter != "" {
			which = fmt.Sprintf("every message that matches its filter %q", d.Filter)
		}
		out = append(out, refuse("target.queue", summaryTargetDiverted,
			"Address %q of target queue %q on broker %q has the exclusive divert %q (on %q): the broker "+
				"sends %s to address %q instead, also a message sent to %s, so the target queue never "+
				"receives it while the broker reports it accepted. Remove the divert or make it "+
				"non-exclusive, or choose a target queue on another address.",
			q.Address, q.Name, f.Target.Broker, d.Name, d.Address, which, d.ForwardingAddress, q.FQQN()))
	}
	return out
}

// targetExpiry refuses a target address that gives messages an expiry and has no expiry
// address to keep them when it passes; with an expiry address it warns.
func targetExpiry(f Facts) []Finding {
	q := f.TargetQueue
	s := f.TargetSettings
	if q == nil || s.NoExpiry {
		return nil
	}
	// Any value of 0 or more is in force (0 expires a message on arrival); -1 is unset.
	var set []string
	for _, d := range []struct {
		name string
		ms   int64
	}{{"expiry-delay", s.ExpiryDelay}, {"min-expiry-delay", s.MinExpiryDelay}, {"max-expiry-delay", s.MaxExpiryDelay}} {
		if d.ms >= 0 {
			set = append(set, fmt.Sprintf("%s %d ms", d.name, d.ms))
		}
	}
	if len(set) == 0 {
		return nil
	}
	settings := strings.Join(set, ", ")
	gives := "the broker gives each message that arrives without an expiry one"
	if s.ExpiryDelay < 0 {
		gives += ", and brings the expiry a message carries within the min and max delays"
	}
	if s.ExpiryAddress == "" {
		return []Finding{refuse("target.queue", summaryTargetExpires,
			"Address %q of target queue %q on broker %q has %s: %s, and the address has no expiry-address, so "+
				"the broker deletes every moved message that is not consumed before its expiry passes. Set an "+
				"expiry-address on the address (e.g. ExpiryQueue) to keep expired messages, or remove %s "+
				"(or set no-expiry=true on Artemis 2.37 or later).",
			q.Address, q.Name, f.Target.Broker, settings, gives, settings)}
	}
	return []Finding{warn("target.queue", summaryTargetGivesExpiry,
		"Address %q of target queue %q on broker %q has %s: %s. A moved message that is not consumed in time "+
			"goes to the expiry address %q; the broker discards it there unless a queue is bound to %q.",
		q.Address, q.Name, f.Target.Broker, settings, gives, s.ExpiryAddress, s.ExpiryAddress)}
}

// targetBrokerPersists refuses a target broker that keeps messages in memory only.
func targetBrokerPersists(f Facts) []Finding {
	if f.TargetBroker.PersistenceEnabled {
		return nil
	}
	return []Finding{refuse("target.broker", summaryNotPersistent,
		"Broker %q runs with persistence-enabled=false: it keeps messages and duplicate ids in memory only, so "+
			"every moved message is lost when it restarts, after the source has let it go. Set "+
			"<persistence-enabled>true</persistence-enabled> in its broker.xml (the default) and restart it, "+
			"or choose another target broker.", f.Target.Broker)}
}

// duplicateDetectionHolds refuses a target that would store a resent message twice. The relay
// stamps every message with _AMQ_DUPL_ID so a resend after a lost confirmation is discarded;
// that needs an id cache that still remembers the whole in-flight window.
func duplicateDetectionHolds(f Facts) []Finding {
	var out []Finding
	if q := f.TargetQueue; q != nil {
		size, source, attribute := f.TargetBroker.IDCacheSize, "the broker's id-cache-size", "target.broker"
		if s := f.TargetSettings.IDCacheSize; s != nil {
			size, source, attribute = *s, fmt.Sprintf("the id-cache-size of address %q", q.Address), "target.queue"
		}
		switch {
		case size <= 0:
			out = append(out, refuse(attribute, summaryIDCacheOff,
				"Duplicate detection on broker %q is off for address %q: %s is %d. The relay stamps every "+
					"message with _AMQ_DUPL_ID so that a message resent after a lost confirmation (a dropped "+
					"connection, a broker restart) is discarded; without the cache it is stored twice. Set "+
					"%s to %s.",
				f.Target.Broker, q.Address, source, size, source, cacheAdvice(f.InFlightWindow)))
		case f.InFlightWindow > 0 && len(f.TargetRelays) > 0 && size < 4*sharedWindow(f):
			out = append(out, refuse("batch_size", summaryIDCacheShared,
				"Broker %q remembers the last %d duplicate ids sent to queue %q (%s), and %s send to it now, "+
					"sharing that cache: with this transfer, up to %d messages (two batches of each) may be waiting "+
					"for confirmation, and the ids of one run's resent messages must not have been pushed out by the "+
					"others' sends. Run the transfers into this queue one after the other (wait for %s), lower their "+
					"batch_size, or raise %s to at least %d.",
				f.Target.Broker, size, q.FQQN(), source, relaysNamed(f.TargetRelays), 2*sharedWindow(f),
				relaysNamed(f.TargetRelays), source, 4*sharedWindow(f)))
		case f.InFlightWindow > 0 && size < 4*f.InFlightWindow:
			out = append(out, refuse("batch_size", summaryIDCacheSmall,
				"Broker %q remembers the last %d duplicate ids sent to address %q (%s), shared with every "+
					"other producer to it, while the relay may have %d messages (two batches of batch_size %d) "+
					"waiting for confirmation. After a lost confirmation the relay resends them, and a resent "+
					"message whose id has already left the cache is stored twice. Set batch_size to at most %d, "+
					"or raise %s to at least %d.",
				f.Target.Broker, size, q.Address, source, 2*f.InFlightWindow, f.InFlightWindow, size/4, source, 4*f.InFlightWindow))
		}
	}
	// A broker without persistence forgets everything on restart; targetBrokerPersists says so.
	if b := f.TargetBroker; !b.PersistIDCache && b.PersistenceEnabled {
		out = append(out, refuse("target.broker", summaryIDCacheForgotten,
			"Broker %q runs with persist-id-cache=false: it keeps the duplicate ids of the messages it stored in "+
				"memory only. A message whose confirmation is lost when the broker restarts is sent again, and "+
				"after the restart the broker no longer knows its _AMQ_DUPL_ID, so it stores it twice. Set "+
				"<persist-id-cache>true</persist-id-cache> in its broker.xml (the default) and restart it, or "+
				"choose another target broker.", f.Target.Broker))
	}
	probe := f.DuplicateDetection
	switch probe.Outcome {
	case DedupDisabled:
		out = append(out, refuse("target.broker", summaryDedupDisabled,
			"A canary sent twice to broker %q with the same _AMQ_DUPL_ID was stored twice (%s): duplicate "+
				"detection is off for AMQP, most likely amqpDuplicateDetection=false on the acceptor. The relay "+
				"relies on it to discard a message resent after a lost confirmation; without it such a message "+
				"is delivered twice. Remove amqpDuplicateDetection=false from the acceptor (it defaults to "+
				"true) and restart the broker, or connect through another acceptor.",
			f.Target.Broker, detailOrNone(probe.Detail)))
	case DedupDiscarded:
		out = append(out, refuse("target.queue", summaryRelayDiscarded,
			"Broker %q accepted a canary sent as the relay sends every message to a queue of routing type %s (named with "+
				"x-opt-routing-type %s, and marked a JMS destination of the other kind, as the source broker "+
				"marks what it stores as Core) and stored no copy of it (%s): it would drop every relayed "+
				"message while confirming it. Nothing moved. Check the broker's version and any broker plugin "+
				"or interceptor that rewrites or drops messages on address routing, or choose a target queue "+
				"of the other routing type.",
			f.Target.Broker, probe.Routing, probe.Routing, detailOrNone(probe.Detail)))
	case DedupUnknown:
		out = append(out, warn("target.broker", summaryDedupUnknown,
			"The duplicate-detection canary on broker %q gave no answer (%s). If duplicate detection is off "+
				"for AMQP there (amqpDuplicateDetection=false on the acceptor), a message the relay resends "+
				"after a lost confirmation is delivered twice; apply checks again before relaying.",
			f.Target.Broker, detailOrNone(probe.Detail)))
	}
	return out
}

// expiringWithoutExpiryAddress warns when the selected messages keep their expiry and the
// target address has no expiry address: the target then deletes those that expire, as the
// source would have done without one, but the operator may expect them in an expiry queue.
func expiringWithoutExpiryAddress(f Facts) []Finding {
	if f.ExpiringMessages <= 0 || !f.ExpiryPreserved || f.TargetQueue == nil || f.TargetSettings.ExpiryAddress != "" {
		return nil
	}
	return []Finding{warn("target.queue", summaryExpiryDropped,
		"%d selected message(s) on queue %q carry an expiry, which they keep on the target. Address %q on broker %q "+
			"has no expiry-address, so the target deletes each of them once its expiry passes (also one that passes "+
			"during the transfer). Give the address an expiry-address to keep expired messages.",
		f.ExpiringMessages, f.Source.Queue, f.TargetQueue.Address, f.Target.Broker)}
}

// targetNearlyFull warns that a BLOCK or FAIL target near its limit will make the run wait.
func targetNearlyFull(f Facts) []Finding {
	q, u := f.TargetQueue, f.TargetUsage
	if q == nil || u == nil || u.LimitPercent < nearlyFullPercent {
		return nil
	}
	policy := strings.ToUpper(f.TargetSettings.AddressFullPolicy)
	if policy != "BLOCK" && policy != "FAIL" {
		return nil
	}
	return []Finding{warn("target.queue", summaryTargetNearlyFull,
		"Address %q of target queue %q on broker %q is %d%% full (%d bytes, %d messages; max-size-bytes %d, "+
			"max-size-messages %d) with address-full-policy %s. When it is full the relay waits for "+
			"consumers to make space, and apply takes as long as that takes.",
		q.Address, q.Name, f.Target.Broker, u.LimitPercent, u.SizeBytes, u.Messages,
		f.TargetSettings.MaxSizeBytes, f.TargetSettings.MaxSizeMessages, policy)}
}

// usageNow describes how full an address is, for a detail.
func usageNow(s artemis.AddressSettings, u *artemis.AddressUsage) string {
	switch {
	case u == nil:
		return "its usage now is unknown"
	case s.MaxSizeBytes <= 0 && s.MaxSizeMessages <= 0:
		return fmt.Sprintf("no limit of its own, so the broker's global-max-size applies; it holds %d bytes and %d messages now",
			u.SizeBytes, u.Messages)
	default:
		return fmt.Sprintf("it is %d%% full now, with %d bytes and %d messages", u.LimitPercent, u.SizeBytes, u.Messages)
	}
}

// cacheAdvice says how large an id cache the relay needs.
func cacheAdvice(window int) string {
	if window <= 0 {
		return "a positive value (the broker's default is 20000)"
	}
	return fmt.Sprintf("at least %d, four times batch_size", 4*window)
}

// sharedWindow is the batch sizes of this transfer and of the runs that send to its target
// queue now, added up: each may have two batches awaiting confirmation.
func sharedWindow(f Facts) int {
	n := f.InFlightWindow
	for _, r := range f.TargetRelays {
		n += r.Batch
	}
	return n
}

// relaysNamed names the runs of relays for a message ("run X", "runs X and Y").
func relaysNamed(relays []TargetRelay) string {
	ids := make([]string, len(relays))
	for i, r := range relays {
		ids[i] = r.RunID
	}
	if len(ids) == 1 {
		return "run " + ids[0]
	}
	return "runs " + strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}
