package core

import (
	"fmt"
	"time"

	"github.com/Azure/go-amqp"
)

// Property and annotation names the broker and this engine use.
const (
	propDuplicateID = "_AMQ_DUPL_ID"
	// propProducerDuplicateID keeps a producer's own _AMQ_DUPL_ID, which the relay's replaces.
	propProducerDuplicateID = "studio_producer_dupl_id"

	// A broker-side move records where a message came from: as application properties on a
	// Core message, as message annotations on an AMQP one.
	PropOrigAddress     = "_AMQ_ORIG_ADDRESS"
	PropOrigQueue       = "_AMQ_ORIG_QUEUE"
	PropOrigMessageID   = "_AMQ_ORIG_MESSAGE_ID"
	propOrigRoutingType = "_AMQ_ORIG_ROUTING_TYPE"
	propRoutingType     = "_AMQ_ROUTING_TYPE"
	AnnOrigAddress      = "x-opt-ORIG-ADDRESS"
	AnnOrigQueue        = "x-opt-ORIG-QUEUE"
	AnnOrigMessageID    = "x-opt-ORIG-MESSAGE-ID"
	annOrigRoutingType  = "x-opt-ORIG-ROUTING-TYPE"
	// annRoutingType is the routing type the target routes a message by: a queue of the other
	// type does not take it, and the sender is not told. Without it the broker falls back to
	// the JMS kind of destination in annJMSDest (a queue is ANYCAST, a topic MULTICAST), which
	// the source broker's conversion writes as "queue" on every message stored as Core.
	annRoutingType = "x-opt-routing-type"
	annJMSDest     = "x-opt-jms-dest"
	// annJMSMsgType is the JMS message type of an AMQP message (5 for a TextMessage), written
	// by JMS clients and by the broker when it converts a Core message.
	annJMSMsgType  = "x-opt-jms-msg-type"
	jmsTextMessage = 5
	// propJMSXDeliveryCount is a JMS-defined property that the broker's Core-to-AMQP conversion
	// (CoreAmqpConverter) writes into every converted message, with a null value unless the
	// Core message carried one of its own.
	propJMSXDeliveryCount = "JMSXDeliveryCount"
)

// Routing is a queue's routing type, as the relay names it on every message it sends to that
// queue (x-opt-routing-type), so that the target broker routes the message into it.
type Routing int8

// The routing types, with the values Artemis gives them in x-opt-routing-type.
const (
	RoutingMulticast Routing = 0
	RoutingAnycast   Routing = 1
)

// routingOf is the Routing of a queue whose routing type the broker names routingType.
func routingOf(routingType string) (Routing, error) {
	switch routingType {
	case "ANYCAST":
		return RoutingAnycast, nil
	case "MULTICAST":
		return RoutingMulticast, nil
	}
	return 0, fmt.Errorf("routing type %q is neither ANYCAST nor MULTICAST", routingType)
}

func (r Routing) String() string {
	if r == RoutingMulticast {
		return "MULTICAST"
	}
	return "ANYCAST"
}

// outgoingCopy returns the message to send to the target: the staged message as a consumer of the
// source queue would have received it, with its source expiry (Unix ms, 0 for none) restored,
// plus the run's duplicate-detection id, routed as the target queue's routing type says. The
// staged message is not changed.
//
// Removed: what the staging move added (_AMQ_ORIG_* properties, x-opt-ORIG-* annotations),
// the address in "to", the delivery count of the staging queue, and the null JMSXDeliveryCount
// that the source broker's conversion gives a message stored as Core (see coreOrigin).
// The routing type is the target queue's: Artemis routes a message sent to a fully qualified
// queue name by the message's own routing type (x-opt-routing-type), or else by its JMS kind of
// destination (x-opt-jms-dest), and a queue of the other type silently takes nothing. A message
// whose JMS kind names the other routing type (every message stored as Core, which the source's
// conversion marks a JMS queue, into a MULTICAST queue; a JMS topic message into an ANYCAST one)
// gets x-opt-routing-type, which comes first; the others, routed into the queue as they are,
// arrive without it.
func outgoingCopy(staged *amqp.Message, duplicateID string, expiresAt int64, target Routing) *amqp.Message {
	out := *staged // shallow: body sections are shared, maps and header are copied below
	if staged.Header != nil {
		h := *staged.Header
		h.DeliveryCount = 0
		h.FirstAcquirer = false
		out.Header = &h
	}
	if expiresAt > 0 {
		// The staging move cleared the expiry. The target takes the absolute expiry time
		// when a message has one; the TTL is the time left, as the broker itself writes it
		// when it converts a Core message to AMQP.
		if out.Header == nil {
			out.Header = &amqp.MessageHeader{}
		}
		out.Header.TTL = max(time.Until(time.UnixMilli(expiresAt)).Truncate(time.Millisecond), time.Millisecond)
		if out.Properties == nil {
			out.Properties = &amqp.MessageProperties{}
		}
	}
	if out.Properties != nil {
		p := *out.Properties
		// "to" names the staging address for a Core message (the broker writes the current
		// address when converting) and the source address for an AMQP one. Without it a JMS
		// consumer on the target sees the queue it consumes from as JMSDestination, as for a
		// message produced there; the target routes by the sender's address, not by "to".
		p.To = nil
		if expiresAt > 0 {
			at := time.UnixMilli(expiresAt).UTC()
			p.AbsoluteExpiryTime = &at
		}
		out.Properties = &p
	}
	out.Annotations = make(amqp.Annotations, len(staged.Annotations)+1)
	if kind, ok := jmsDestRouting(staged); ok && kind != target {
		out.Annotations[annRoutingType] = int8(target)
	}
	for k, v := range staged.Annotations {
		switch k {
		case AnnOrigAddress, AnnOrigQueue, AnnOrigMessageID, annOrigRoutingType, annRoutingType:
			continue
		}
		// x-opt-jms-dest and x-opt-jms-reply-to stay: they hold the kind of destination
		// (queue, topic, ...) of "to" and "reply-to", set by the producer, not an address.
		out.Annotations[k] = v
	}
	if isNullTextBody(staged) {
		// go-amqp reads an amqp-value section holding null as no body at all. Sent without a
		// body, the target would give Core consumers a BytesMessage instead of a TextMessage
		// whose text is null, so the null value is written back.
		out.Value = amqp.Null{}
	}
	props := make(map[string]any, len(staged.ApplicationProperties)+1)
	core := coreOrigin(staged)
	for k, v := range staged.ApplicationProperties {
		switch k {
		case PropOrigAddress, PropOrigQueue, PropOrigMessageID, propOrigRoutingType, propRoutingType:
			continue
		case propJMSXDeliveryCount:
			// The conversion adds it, null, to every Core message that had none; a Core message
			// that set one of its own gets its value. A null one is thus the conversion's (or a
			// Core producer's explicit null, which the broker shows the same way): not carried.
			if core && v == nil {
				continue
			}
		case propDuplicateID:
			props[propProducerDuplicateID] = v
			continue
		}
		props[k] = v
	}
	props[propDuplicateID] = duplicateID
	out.ApplicationProperties = props
	out.DeliveryTag = nil
	out.Format = 0
	return &out
}

// jmsDestRouting is the routing type the target broker reads from a message's JMS kind of
// destination when it carries no routing type of its own (Artemis's AMQPMessage.getRoutingType,
// the same in 2.18, 2.31 and 2.40): a queue or temporary queue is ANYCAST, a topic or temporary
// topic MULTICAST; ok is false when the message names no kind the broker reads.
func jmsDestRouting(staged *amqp.Message) (kind Routing, ok bool) {
	var v int64
	switch t := staged.Annotations[annJMSDest].(type) {
	case int8:
		v = int64(t)
	case uint8:
		v = int64(t)
	case int32:
		v = int64(t)
	case int64:
		v = t
	default:
		return 0, false
	}
	switch v {
	case 0, 2: // queue, temporary queue
		return RoutingAnycast, true
	case 1, 3: // topic, temporary topic
		return RoutingMulticast, true
	}
	return 0, false
}

// coreOrigin reports whether a staged message is stored on the source as a Core message
// (produced over Core, STOMP, OpenWire or MQTT): the staging move then records its origin in
// application properties, which the broker's conversion for the relay carries over, where an
// AMQP message gets message annotations (see originOf).
func coreOrigin(staged *amqp.Message) bool {
	_, ok := staged.ApplicationProperties[PropOrigMessageID]
	return ok
}

// isNullTextBody reports whether msg is a JMS TextMessage whose body go-amqp decoded as absent:
// an amqp-value section holding null, which JMS clients and the broker write for a null text.
func isNullTextBody(msg *amqp.Message) bool {
	if msg.Value != nil || msg.Data != nil || msg.Sequence != nil {
		return false
	}
	switch t := msg.Annotations[annJMSMsgType].(type) {
	case int8:
		return t == jmsTextMessage
	case uint8:
		return t == jmsTextMessage
	case int32:
		return t == jmsTextMessage
	case int64:
		return t == jmsTextMessage
	}
	return false
}
