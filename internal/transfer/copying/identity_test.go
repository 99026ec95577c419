package copying

import (
	"testing"
	"time"

	"github.com/Azure/go-amqp"
)

func identityTestMessage() *amqp.Message {
	created := time.UnixMilli(1_796_000_000_000).UTC()
	return &amqp.Message{
		Header:                &amqp.MessageHeader{Durable: true, Priority: 4, TTL: time.Hour},
		Properties:            &amqp.MessageProperties{MessageID: "ID:1", CreationTime: &created},
		ApplicationProperties: map[string]any{"a": int64(1), "b": "two", "c": true, "d": 1.5},
		Annotations:           amqp.Annotations{"x-opt-jms-msg-type": int8(5)},
		Value:                 map[string]any{"k1": "v1", "k2": int32(2)},
	}
}

func TestMessageIdentity_IsTheSameOnEveryBrowseOfTheSameMessage(t *testing.T) {
	base := messageIdentity(identityTestMessage())
	for name, change := range map[string]func(m *amqp.Message){
		// What changes between browses of one message, or belongs to a delivery, not the message.
		"header ttl (a converted Core message's time left)": func(m *amqp.Message) { m.Header.TTL = time.Minute },
		"header delivery count":                             func(m *amqp.Message) { m.Header.DeliveryCount = 3 },
		"annotations":                                       func(m *amqp.Message) { m.Annotations = nil },
		"JMSXDeliveryCount":                                 func(m *amqp.Message) { m.ApplicationProperties["JMSXDeliveryCount"] = int32(2) },
		"delivery tag":                                      func(m *amqp.Message) { m.DeliveryTag = []byte{9} },
		// A map is the same whatever order it was built (or decoded) in.
		"application properties rebuilt": func(m *amqp.Message) {
			m.ApplicationProperties = map[string]any{"d": 1.5, "c": true, "b": "two", "a": int64(1)}
		},
	} {
		m := identityTestMessage()
		change(m)
		for i := 0; i < 20; i++ { // Go randomises map iteration: repeat
			if got := messageIdentity(m); got != base {
				t.Fatalf("%s: identity %d, want %d", name, got, base)
			}
		}
	}
}

func TestMessageIdentity_TellsApartMessagesThatDifferInWhatTheProducerSet(t *testing.T) {
	base := messageIdentity(identityTestMessage())
	for name, change := range map[string]func(m *amqp.Message){
		"message-id":      func(m *amqp.Message) { m.Properties.MessageID = "ID:2" },
		"message-id type": func(m *amqp.Message) { m.Properties.MessageID = []byte("ID:1") },
		"no message-id":   func(m *amqp.Message) { m.Properties.MessageID = nil },
		"creation-time": func(m *amqp.Message) {
			t := m.Properties.CreationTime.Add(time.Millisecond)
			m.Properties.CreationTime = &t
		},
		"correlation-id":             func(m *amqp.Message) { m.Properties.CorrelationID = "c" },
		"a property's value":         func(m *amqp.Message) { m.ApplicationProperties["a"] = int64(2) },
		"a property's type":          func(m *amqp.Message) { m.ApplicationProperties["a"] = int32(1) },
		"a property's key":           func(m *amqp.Message) { delete(m.ApplicationProperties, "a"); m.ApplicationProperties["z"] = int64(1) },
		"one more property":          func(m *amqp.Message) { m.ApplicationProperties["e"] = nil },
		"the body":                   func(m *amqp.Message) { m.Value = map[string]any{"k1": "v1", "k2": int32(3)} },
		"the body's kind":            func(m *amqp.Message) { m.Value = nil; m.Data = [][]byte{[]byte("k1")} },
		"a string and its bytes":     func(m *amqp.Message) { m.Value = "v1" },
		"a property moved into body": func(m *amqp.Message) { delete(m.ApplicationProperties, "b"); m.Value = "two" },
	} {
		m := identityTestMessage()
		change(m)
		if messageIdentity(m) == base {
			t.Errorf("%s: same identity as the original", name)
		}
	}
}

func TestCopyDuplicateID_NamesTheRunAndTheIdentity(t *testing.T) {
	if got := CopyDuplicateID("0123456789ab-m4x9k2", -42); got != "studio:0123456789ab-m4x9k2:c-42" {
		t.Errorf("CopyDuplicateID = %q", got)
	}
}

func TestCopyExpiry_KeepsTheOriginalsAbsoluteExpiry(t *testing.T) {
	created := time.UnixMilli(1_796_000_000_000)
	abs := created.Add(2 * time.Hour)
	tests := []struct {
		name string
		msg  *amqp.Message
		want int64
	}{
		{"none", &amqp.Message{}, 0},
		{"absolute expiry (a Core message's, or an AMQP producer's)",
			&amqp.Message{Header: &amqp.MessageHeader{TTL: time.Minute}, Properties: &amqp.MessageProperties{AbsoluteExpiryTime: &abs, CreationTime: &created}}, abs.UnixMilli()},
		{"ttl and creation-time", &amqp.Message{Header: &amqp.MessageHeader{TTL: time.Hour}, Properties: &amqp.MessageProperties{CreationTime: &created}},
			created.Add(time.Hour).UnixMilli()},
		{"ttl alone: kept as a ttl", &amqp.Message{Header: &amqp.MessageHeader{TTL: time.Hour}}, 0},
	}
	for _, tt := range tests {
		if got := copyExpiry(tt.msg); got != tt.want {
			t.Errorf("%s: copyExpiry = %d, want %d", tt.name, got, tt.want)
		}
	}
}
