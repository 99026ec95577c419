package core

import (
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
	// annRoutingType makes the target pick a routing type; one that differs from the target
	// queue's drops the message, so relayed messages never carry it.
	annRoutingType = "x-opt-routing-type"
	// annJMSMsgType is the JMS message type of an AMQP message (5 for a TextMessage), written
	// by JMS clients and by the broker when it converts a Core message.
	annJMSMsgType  = "x-opt-jms-msg-type"
	jmsTextMessage = 5
	// propJMSXDeliveryCount is a JMS-defined property that the broker's Core-to-AMQP conversion
	// (CoreAmqpConverter) writes into every converted message, with a null value unless the
	// Core message carried one of its own.
	propJMSXDeliveryCount = "JMSXDeliveryCount"
)

// OutgoingCopy returns the message to send to the target: the staged message as a consumer of the
// source queue would have received it, with its source expiry (Unix ms, 0 for none) restored,
// plus the run's duplicate-detection id. The staged message is not changed.
//
// Removed: what the staging move added (_AMQ_ORIG_* properties, x-opt-ORIG-* annotations),
// the routing type (it would make the target drop the message on a queue of the other type),
// the address in "to", the delivery count of the staging queue, and the null JMSXDeliveryCount
// that the source broker's conversion gives a message stored as Core (see coreOrigin).
func OutgoingCopy(staged *amqp.Message, duplicateID string, expiresAt int64) *amqp.Message {
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
	out.Annotations = make(amqp.Annotations, len(staged.Annotations))
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
