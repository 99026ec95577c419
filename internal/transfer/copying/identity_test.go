package copying

import (
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
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
		"annotations the broker adds on a move": func(m *amqp.Message) {
			m.Annotations["x-opt-ORIG-QUEUE"] = "side"
			m.Annotations[amqp.Symbol("x-opt-ORIG-MESSAGE-ID")] = int64(7)
			m.Annotations["x-opt-ACTUAL-EXPIRY"] = int64(1)
		},
		"the broker's expiry retry": func(m *amqp.Message) { m.ApplicationProperties["_AMQ_ACTUAL_EXPIRY"] = int64(1) },
		"JMSXDeliveryCount":         func(m *amqp.Message) { m.ApplicationProperties["JMSXDeliveryCount"] = int32(2) },
		"delivery tag":              func(m *amqp.Message) { m.DeliveryTag = []byte{9} },
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
		"durability":                 func(m *amqp.Message) { m.Header.Durable = false },
		"priority":                   func(m *amqp.Message) { m.Header.Priority = 7 },
		"an annotation's value":      func(m *amqp.Message) { m.Annotations["x-opt-jms-msg-type"] = int8(3) },
		"one more annotation":        func(m *amqp.Message) { m.Annotations["x-opt-app"] = "a" },
	} {
		m := identityTestMessage()
		change(m)
		if messageIdentity(m) == base {
			t.Errorf("%s: same identity as the original", name)
		}
	}
}

func TestCopyDuplicateID_NamesTheRunAndTheIdentity(t *testing.T) {
	if got := copyDuplicateID("0123456789ab-m4x9k2", -42); got != "studio:0123456789ab-m4x9k2:c-42" {
		t.Errorf("copyDuplicateID = %q", got)
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

func TestMessageIdentityV2_IsTheSameForAMessageTheBrokerReAddedAndV1KeepsItsOwn(t *testing.T) {
	created := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	expires := created.Add(time.Hour)
	original := &amqp.Message{Properties: &amqp.MessageProperties{MessageID: "m-1", CreationTime: &created, AbsoluteExpiryTime: &expires},
		ApplicationProperties: map[string]any{"n": int64(1)}, Data: [][]byte{[]byte("body")}}
	to, reset := "orders", created.Add(2*time.Hour)
	// The same message after a dead-letter retry or an admin move: its address in to, a new
	// expiry, and the properties that say where it came from.
	readded := &amqp.Message{Properties: &amqp.MessageProperties{MessageID: "m-1", CreationTime: &created, AbsoluteExpiryTime: &reset, To: &to},
		ApplicationProperties: map[string]any{"n": int64(1), "_AMQ_ORIG_QUEUE": "orders.dlq", "_AMQ_ORIG_ADDRESS": "orders.dlq",
			"_AMQ_ORIG_MESSAGE_ID": int64(42)},
		Data: [][]byte{[]byte("body")}}
	if messageIdentityV(identityV2, original) != messageIdentityV(identityV2, readded) {
		t.Error("version 2 tells the re-added message apart from the original")
	}
	if messageIdentityV(identityV1, original) == messageIdentityV(identityV1, readded) {
		t.Error("version 1 changed: runs recorded by it would no longer find what they copied")
	}
	if messageIdentityV(identityV3, original) != messageIdentityV(identityV3, readded) {
		t.Error("version 3 tells the re-added message apart from the original")
	}
	// What the producer set still tells messages apart.
	other := *readded
	other.ApplicationProperties = map[string]any{"n": int64(2)}
	if messageIdentityV(identityV2, &other) == messageIdentityV(identityV2, original) {
		t.Error("version 2 no longer tells apart messages whose application properties differ")
	}
}

// Version 3 adds the header's durability and priority and the producer's annotations; versions
// 1 and 2 stay as runs recorded by them walked.
func TestMessageIdentityV3_TellsApartWhatV2MergedAndNewRunsUseIt(t *testing.T) {
	m := identityTestMessage()
	other := identityTestMessage()
	other.Header.Priority, other.Header.Durable, other.Annotations = 9, false, amqp.Annotations{"x-opt-app": "b"}
	if messageIdentityV(identityV2, m) != messageIdentityV(identityV2, other) {
		t.Error("version 2 changed: runs recorded by it would no longer find what they copied")
	}
	if messageIdentityV(identityV3, m) == messageIdentityV(identityV3, other) {
		t.Error("version 3 does not tell apart messages that differ in durability, priority and annotations")
	}
	noHeader := identityTestMessage()
	noHeader.Header = nil
	defaults := identityTestMessage()
	defaults.Header = &amqp.MessageHeader{Priority: 4}
	if messageIdentityV(identityV3, noHeader) != messageIdentityV(identityV3, defaults) {
		t.Error("an absent header and a header of AMQP's defaults give different identities")
	}
	if messageIdentity(m) != messageIdentityV(identityV3, m) || currentIdentity != identityV3 {
		t.Error("new runs do not use version 3")
	}
}

func TestCopier_ARunRecordedBeforeIdentityVersionsKeepsTheFirst(t *testing.T) {
	for recorded, want := range map[int]int{0: identityV1, identityV1: identityV1, identityV2: identityV2, identityV3: identityV3} {
		c := newCopier(&core.Worker{Run: core.Run{CopyIdentity: recorded}}, nil, false)
		if c.identity != want {
			t.Errorf("a run recorded with identity %d is walked with %d, want %d", recorded, c.identity, want)
		}
	}
}
