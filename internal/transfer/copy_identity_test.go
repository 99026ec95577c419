package transfer

import (
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
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

func TestCopySelectors_FreezeAtT0AndJoinIDChunksUpToTheSelectorLimit(t *testing.T) {
	t0 := time.UnixMilli(1_796_000_000_000)
	if got := copySelectors(Selection{}, t0); len(got) != 1 || got[0] != "AMQTimestamp <= 1796000000000" {
		t.Errorf("whole queue: %q", got)
	}
	if got := copySelectors(Selection{Filter: "a = 1"}, t0); len(got) != 1 || got[0] != "(a = 1) AND AMQTimestamp <= 1796000000000" {
		t.Errorf("filter: %q", got)
	}
	ids := make([]string, 2000)
	for i := range ids {
		ids[i] = "ID:" + strings.Repeat("x", 30) + string(rune('a'+i%26))
	}
	got := copySelectors(Selection{MessageIDs: ids}, t0)
	seen := 0
	for _, s := range got {
		if len(s) > maxSelectorLength {
			t.Errorf("a selector of %d characters, over %d", len(s), maxSelectorLength)
		}
		seen += strings.Count(s, "'ID:")
	}
	if seen != len(ids) || len(got) < 2 || len(got) >= len(Selection{MessageIDs: ids}.StageFilters(t0)) {
		t.Errorf("%d ids in %d selectors, want all %d in fewer selectors than the %d stage filters", seen, len(got), len(ids),
			len(Selection{MessageIDs: ids}.StageFilters(t0)))
	}
}

func TestCopyFindings_SayWhatACopyLeavesOutAndHowItIdentifiesMessages(t *testing.T) {
	src := preflight.Endpoint{Broker: "eu", Queue: "orders"}
	tests := []struct {
		name  string
		facts copyFacts
		want  []string // summaries, in order
		words []string // in the details
	}{
		{"nothing to say", copyFacts{Source: src, Scheduled: -1}, nil, nil},
		{"identity sample", copyFacts{Source: src, Sampled: 1000, WithoutMessageID: 12, Indistinguishable: 3, Scheduled: -1},
			[]string{summaryCopyIdentity}, []string{"first 1000 selected", "12 carry no message-id", "3 are identical"}},
		{"could not browse", copyFacts{Source: src, Sampled: -1, Scheduled: -1}, []string{summaryCopyIdentity}, []string{"could not browse"}},
		{"consumers and scheduled", copyFacts{Source: src, Consumers: 2, Delivering: 7, Scheduled: 4},
			[]string{summaryCopySourceConsumers, summaryCopyScheduled}, []string{"2 consumer(s) (7 message(s) in delivery", "4 scheduled"}},
		{"unfinished copy", copyFacts{Source: src, Scheduled: -1, Unfinished: &CopyRun{RunID: "r1", Copied: 40, Status: "interrupted", T0: time.UnixMilli(0)}},
			[]string{summaryCopyUnfinished}, []string{"r1", "40 messages copied"}},
	}
	for _, tt := range tests {
		got := copyFindings(tt.facts)
		var summaries []string
		var details string
		for _, f := range got {
			if f.Severity != preflight.Warning {
				t.Errorf("%s: %q is not a warning", tt.name, f.Summary)
			}
			summaries = append(summaries, f.Summary)
			details += f.Detail
		}
		if strings.Join(summaries, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: findings %q, want %q", tt.name, summaries, tt.want)
		}
		for _, w := range tt.words {
			if !strings.Contains(details, w) {
				t.Errorf("%s: the details do not say %q: %s", tt.name, w, details)
			}
		}
	}
}
