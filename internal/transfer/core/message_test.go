package core

import (
	"reflect"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
)

func ptr[T any](v T) *T { return &v }

func TestRelayCopy(t *testing.T) {
	const dupID = "studio:run:node:42"
	created := time.UnixMilli(1_700_000_000_000).UTC()
	expires := created.Add(time.Hour)
	tests := []struct {
		name   string
		staged *amqp.Message
		want   *amqp.Message
	}{
		{
			name: "what the staging move added is removed, the producer's annotations stay",
			staged: &amqp.Message{
				Annotations: amqp.Annotations{
					AnnOrigAddress: "orders", AnnOrigQueue: "orders", AnnOrigMessageID: int64(42), annOrigRoutingType: int8(1),
					annRoutingType: int8(1), "x-opt-jms-dest": int8(0), "x-opt-jms-reply-to": int8(1), annJMSMsgType: int8(3),
					"x-opt-custom": "kept"},
				ApplicationProperties: map[string]any{
					PropOrigAddress: "orders", PropOrigQueue: "orders", PropOrigMessageID: int64(42), propOrigRoutingType: int8(1),
					propRoutingType: int8(1), "p_int": int32(7), "p_string": "v"},
				Data: [][]byte{{1, 2, 3}},
			},
			want: &amqp.Message{
				Annotations:           amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-reply-to": int8(1), annJMSMsgType: int8(3), "x-opt-custom": "kept"},
				ApplicationProperties: map[string]any{"p_int": int32(7), "p_string": "v", propDuplicateID: dupID},
				Data:                  [][]byte{{1, 2, 3}},
			},
		},
		{
			name: "a message stored as Core loses the null JMSXDeliveryCount the broker's conversion gave it",
			staged: &amqp.Message{ApplicationProperties: map[string]any{
				PropOrigMessageID: int64(42), propJMSXDeliveryCount: nil, "p": "v"}, Value: "text"},
			want: &amqp.Message{Annotations: amqp.Annotations{},
				ApplicationProperties: map[string]any{"p": "v", propDuplicateID: dupID}, Value: "text"},
		},
		{
			name: "a Core message's own JMSXDeliveryCount is kept",
			staged: &amqp.Message{ApplicationProperties: map[string]any{
				PropOrigMessageID: int64(42), propJMSXDeliveryCount: int32(3)}, Value: "text"},
			want: &amqp.Message{Annotations: amqp.Annotations{},
				ApplicationProperties: map[string]any{propJMSXDeliveryCount: int32(3), propDuplicateID: dupID}, Value: "text"},
		},
		{
			name: "an AMQP message's null JMSXDeliveryCount is its producer's, and kept",
			staged: &amqp.Message{Annotations: amqp.Annotations{AnnOrigMessageID: int64(42)},
				ApplicationProperties: map[string]any{propJMSXDeliveryCount: nil}, Value: "text"},
			want: &amqp.Message{Annotations: amqp.Annotations{},
				ApplicationProperties: map[string]any{propJMSXDeliveryCount: nil, propDuplicateID: dupID}, Value: "text"},
		},
		{
			name:   "a producer's duplicate id is kept under another name",
			staged: &amqp.Message{ApplicationProperties: map[string]any{propDuplicateID: "mine"}, Value: "text"},
			want: &amqp.Message{Annotations: amqp.Annotations{},
				ApplicationProperties: map[string]any{propProducerDuplicateID: "mine", propDuplicateID: dupID}, Value: "text"},
		},
		{
			name: "the header keeps durability, priority and TTL but not the staging queue's delivery count",
			staged: &amqp.Message{Header: &amqp.MessageHeader{Durable: true, Priority: 9, TTL: time.Minute, FirstAcquirer: true, DeliveryCount: 3},
				Value: "text"},
			want: &amqp.Message{Header: &amqp.MessageHeader{Durable: true, Priority: 9, TTL: time.Minute},
				Annotations: amqp.Annotations{}, ApplicationProperties: map[string]any{propDuplicateID: dupID}, Value: "text"},
		},
		{
			name:   "no header stays no header: the message stays non-durable",
			staged: &amqp.Message{Value: "text"},
			want:   &amqp.Message{Annotations: amqp.Annotations{}, ApplicationProperties: map[string]any{propDuplicateID: dupID}, Value: "text"},
		},
		{
			name: "properties are kept except to",
			staged: &amqp.Message{Properties: &amqp.MessageProperties{
				MessageID: "ID:abc", UserID: []byte("alice"), To: ptr("studio.transfer.r1"), Subject: ptr("type"),
				ReplyTo: ptr("replies"), CorrelationID: []byte{1, 2}, ContentType: ptr("text/plain"), ContentEncoding: ptr("gzip"),
				AbsoluteExpiryTime: &expires, CreationTime: &created, GroupID: ptr("g"), GroupSequence: ptr(uint32(2)),
				ReplyToGroupID: ptr("rg")}},
			want: &amqp.Message{Properties: &amqp.MessageProperties{
				MessageID: "ID:abc", UserID: []byte("alice"), Subject: ptr("type"),
				ReplyTo: ptr("replies"), CorrelationID: []byte{1, 2}, ContentType: ptr("text/plain"), ContentEncoding: ptr("gzip"),
				AbsoluteExpiryTime: &expires, CreationTime: &created, GroupID: ptr("g"), GroupSequence: ptr(uint32(2)),
				ReplyToGroupID: ptr("rg")},
				Annotations: amqp.Annotations{}, ApplicationProperties: map[string]any{propDuplicateID: dupID}},
		},
		{
			name:   "a TextMessage with null text keeps its null body",
			staged: &amqp.Message{Annotations: amqp.Annotations{annJMSMsgType: int8(jmsTextMessage)}},
			want: &amqp.Message{Annotations: amqp.Annotations{annJMSMsgType: int8(jmsTextMessage)},
				ApplicationProperties: map[string]any{propDuplicateID: dupID}, Value: amqp.Null{}},
		},
		{
			name:   "a JMS Message without body stays without body",
			staged: &amqp.Message{Annotations: amqp.Annotations{annJMSMsgType: int8(0)}},
			want: &amqp.Message{Annotations: amqp.Annotations{annJMSMsgType: int8(0)},
				ApplicationProperties: map[string]any{propDuplicateID: dupID}},
		},
		{
			name:   "an empty TextMessage keeps its empty string",
			staged: &amqp.Message{Annotations: amqp.Annotations{annJMSMsgType: int8(jmsTextMessage)}, Value: ""},
			want: &amqp.Message{Annotations: amqp.Annotations{annJMSMsgType: int8(jmsTextMessage)},
				ApplicationProperties: map[string]any{propDuplicateID: dupID}, Value: ""},
		},
		{
			name:   "a message of another client with no body and no JMS type stays without body",
			staged: &amqp.Message{},
			want:   &amqp.Message{Annotations: amqp.Annotations{}, ApplicationProperties: map[string]any{propDuplicateID: dupID}},
		},
		{
			name:   "sequence bodies are kept",
			staged: &amqp.Message{Sequence: [][]any{{"a", int64(1)}, {true}}},
			want: &amqp.Message{Annotations: amqp.Annotations{}, ApplicationProperties: map[string]any{propDuplicateID: dupID},
				Sequence: [][]any{{"a", int64(1)}, {true}}},
		},
		{
			name:   "delivery tag and message format are not carried over",
			staged: &amqp.Message{DeliveryTag: []byte{9}, Format: 0x468C0100, Data: [][]byte{{1}}},
			want: &amqp.Message{Annotations: amqp.Annotations{}, ApplicationProperties: map[string]any{propDuplicateID: dupID},
				Data: [][]byte{{1}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopyMessage(t, tt.staged)
			got := outgoingCopy(tt.staged, dupID, 0, RoutingAnycast)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("relayed\n%#v\nwant\n%#v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.staged, before) {
				t.Errorf("outgoingCopy changed the staged message:\n%#v\nwas\n%#v", tt.staged, before)
			}
			// What is sent must encode, and decode to the same message as far as go-amqp can
			// tell (an amqp-value holding null decodes as no body).
			raw, err := got.MarshalBinary()
			if err != nil {
				t.Fatalf("encoding the relayed message: %v", err)
			}
			var decoded amqp.Message
			if err := decoded.UnmarshalBinary(raw); err != nil {
				t.Fatalf("decoding the relayed message: %v", err)
			}
			if got.Value != nil && got.Value != (amqp.Null{}) && !reflect.DeepEqual(decoded.Value, got.Value) {
				t.Errorf("body value decodes as %#v, sent %#v", decoded.Value, got.Value)
			}
		})
	}
}

// routedAs is the routing type Artemis routes a message by (AMQPMessage.getRoutingType): its
// x-opt-routing-type, else its JMS kind of destination; ok false when it names neither, and
// then any queue takes it.
func routedAs(m *amqp.Message) (Routing, bool) {
	if v, ok := m.Annotations[annRoutingType].(int8); ok {
		return Routing(v), true
	}
	return jmsDestRouting(m)
}

// TestRelayCopy_IsRoutedAsTheTargetQueue: whatever routing type or JMS kind of destination a
// staged message carries (the source broker's conversion marks every message stored as Core a
// JMS queue; a JMS producer marks its topic messages), the copy is routed as the target queue's
// routing type, or names none; it names x-opt-routing-type only where its JMS kind names the
// other type, and the producer's JMS kinds themselves are kept.
func TestRelayCopy_IsRoutedAsTheTargetQueue(t *testing.T) {
	staged := map[string]*amqp.Message{
		"no routing":             {Value: "x"},
		"a JMS queue":            {Annotations: amqp.Annotations{annJMSDest: int8(0)}, Value: "x"},
		"a JMS topic":            {Annotations: amqp.Annotations{annJMSDest: int8(1)}, Value: "x"},
		"a temporary JMS queue":  {Annotations: amqp.Annotations{annJMSDest: int8(2)}, Value: "x"},
		"a temporary JMS topic":  {Annotations: amqp.Annotations{annJMSDest: int8(3)}, Value: "x"},
		"an unknown JMS kind":    {Annotations: amqp.Annotations{annJMSDest: int8(9)}, Value: "x"},
		"routed anycast":         {Annotations: amqp.Annotations{annRoutingType: int8(1)}, Value: "x"},
		"routed multicast topic": {Annotations: amqp.Annotations{annRoutingType: int8(0), annJMSDest: int8(1)}, Value: "x"},
		"a Core origin, as a JMS queue": {Annotations: amqp.Annotations{annJMSDest: int8(0)},
			ApplicationProperties: map[string]any{PropOrigMessageID: int64(3), propRoutingType: int8(1)}, Value: "x"},
	}
	for name, msg := range staged {
		for _, target := range []Routing{RoutingAnycast, RoutingMulticast} {
			got := outgoingCopy(msg, "d", 0, target)
			if r, ok := routedAs(got); ok && r != target {
				t.Errorf("%s into a %s queue is routed as %s", name, target, r)
			}
			kind, hasKind := jmsDestRouting(msg)
			if _, named := got.Annotations[annRoutingType]; named != (hasKind && kind != target) {
				t.Errorf("%s into a %s queue: x-opt-routing-type %v, want it only where the JMS kind names the other type", name, target, got.Annotations[annRoutingType])
			}
			if want, had := msg.Annotations[annJMSDest]; had && got.Annotations[annJMSDest] != want {
				t.Errorf("%s into a %s queue: x-opt-jms-dest %v, want the producer's %v", name, target, got.Annotations[annJMSDest], want)
			}
			if _, ok := got.ApplicationProperties[propRoutingType]; ok {
				t.Errorf("%s into a %s queue keeps the Core routing type property", name, target)
			}
		}
	}
	for _, tt := range []struct {
		name string
		want Routing
	}{{"ANYCAST", RoutingAnycast}, {"MULTICAST", RoutingMulticast}} {
		if got, err := routingOf(tt.name); err != nil || got != tt.want || got.String() != tt.name {
			t.Errorf("routingOf(%q) = %v, %v", tt.name, got, err)
		}
	}
	if _, err := routingOf("anycast"); err == nil {
		t.Error("routingOf accepts a routing type the broker does not write")
	}
}

// TestRelayCopy_NullTextBodyIsSentAsAMQPValueNull checks the bytes on the wire: an amqp-value
// section (descriptor 0x77) holding null (0x40), which the target turns into a TextMessage.
func TestRelayCopy_NullTextBodyIsSentAsAMQPValueNull(t *testing.T) {
	staged := &amqp.Message{Annotations: amqp.Annotations{annJMSMsgType: int8(jmsTextMessage)}}
	raw, err := outgoingCopy(staged, "d", 0, RoutingAnycast).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	amqpValueNull := []byte{0x00, 0x53, 0x77, 0x40}
	if len(raw) < len(amqpValueNull) || !reflect.DeepEqual(raw[len(raw)-len(amqpValueNull):], amqpValueNull) {
		t.Errorf("encoded message ends % x, want an amqp-value null section % x", raw, amqpValueNull)
	}
}

// TestRelayCopy_RestoresTheSourceExpiry: the staging move cleared the expiry; the relayed
// copy gets the recorded absolute expiry back, and the time left as its TTL, with or without a
// header and properties on the staged message.
func TestRelayCopy_RestoresTheSourceExpiry(t *testing.T) {
	expiresAt := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	for name, staged := range map[string]*amqp.Message{
		"no header or properties":       {Value: "x"},
		"header and properties present": {Header: &amqp.MessageHeader{Durable: true, Priority: 7}, Properties: &amqp.MessageProperties{MessageID: "ID:1"}, Value: "x"},
	} {
		t.Run(name, func(t *testing.T) {
			got := outgoingCopy(staged, "d", expiresAt.UnixMilli(), RoutingMulticast)
			if got.Properties == nil || got.Properties.AbsoluteExpiryTime == nil || !got.Properties.AbsoluteExpiryTime.Equal(expiresAt) {
				t.Fatalf("absolute expiry %v, want %v", got.Properties, expiresAt)
			}
			if ttl := got.Header.TTL; ttl <= 59*time.Minute || ttl > time.Hour {
				t.Errorf("TTL %s, want the time left (about an hour)", ttl)
			}
			if staged.Header != nil && (!got.Header.Durable || got.Header.Priority != 7) || staged.Properties != nil && got.Properties.MessageID != "ID:1" {
				t.Errorf("other header or properties fields changed: %+v %+v", got.Header, got.Properties)
			}
			if staged.Properties != nil && staged.Properties.AbsoluteExpiryTime != nil || staged.Header != nil && staged.Header.TTL != 0 {
				t.Error("outgoingCopy changed the staged message")
			}
		})
	}
	past := outgoingCopy(&amqp.Message{Value: "x"}, "d", time.Now().Add(-time.Minute).UnixMilli(), RoutingAnycast)
	if past.Header.TTL != time.Millisecond {
		t.Errorf("an expiry already past gets TTL %s, want 1ms (the target then expires it as the source would have)", past.Header.TTL)
	}
}

// deepCopyMessage copies the parts of a message that OutgoingCopy could change in place.
func deepCopyMessage(t *testing.T, m *amqp.Message) *amqp.Message {
	t.Helper()
	c := *m
	if m.Header != nil {
		h := *m.Header
		c.Header = &h
	}
	if m.Properties != nil {
		p := *m.Properties
		c.Properties = &p
	}
	if m.Annotations != nil {
		c.Annotations = amqp.Annotations{}
		for k, v := range m.Annotations {
			c.Annotations[k] = v
		}
	}
	if m.ApplicationProperties != nil {
		c.ApplicationProperties = map[string]any{}
		for k, v := range m.ApplicationProperties {
			c.ApplicationProperties[k] = v
		}
	}
	return &c
}
