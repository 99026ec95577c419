package move

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// Fidelity of AMQP messages no JMS client writes.

func ptr[T any](v T) *T { return &v }

// nativeMessages are AMQP messages no JMS client writes: several data or sequence sections,
// amqp-value bodies of AMQP types, message and correlation ids that are not strings,
// application properties of AMQP-only types, custom annotations, a footer and an 11 MiB body.
// They are sent with go-amqp (not the relay's code) and checked in the raw AMQP view and by
// Qpid JMS. Symbol values are left to TestMove_FidelityOfAMQPSymbolValues.
func nativeMessages() []*amqp.Message {
	created := time.UnixMilli(1_760_000_000_123).UTC()
	uuid := amqp.UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	props := func(fid string) map[string]any {
		return map[string]any{"fid": fid, "u8": uint8(1), "u16": uint16(2), "u32": uint32(3), "u64": uint64(4),
			"i8": int8(-1), "i16": int16(-2), "i32": int32(-3), "i64": int64(-4), "f32": float32(1.5), "f64": 2.25,
			"bool": false, "ts": created, "uuid": uuid, "bin": []byte{0, 1, 0xff}, "str": "s ✓"}
	}
	return []*amqp.Message{
		{Header: &amqp.MessageHeader{Durable: true, Priority: 6},
			Properties: &amqp.MessageProperties{MessageID: uint64(4242), CorrelationID: uuid, ContentType: ptr("application/octet-stream"),
				Subject: ptr("subject"), ReplyTo: ptr("replies"), ReplyToGroupID: ptr("reply-group"), GroupID: ptr("g"),
				GroupSequence: ptr(uint32(7)), UserID: []byte("admin"), CreationTime: &created},
			ApplicationProperties: props("native-two-data-sections"), Data: [][]byte{{1, 2, 3}, {4, 5}},
			Footer: amqp.Annotations{"x-opt-footer": "f"}},
		{Properties: &amqp.MessageProperties{MessageID: uuid, CorrelationID: uint64(9)},
			ApplicationProperties: props("native-two-sequence-sections"), Sequence: [][]any{{"a", int64(1)}, {true, 2.5}}},
		{Header: &amqp.MessageHeader{Durable: true}, Properties: &amqp.MessageProperties{MessageID: []byte{0xca, 0xfe}, CorrelationID: []byte{1}},
			ApplicationProperties: props("native-value-long"), Value: int64(-5)},
		{Header: &amqp.MessageHeader{Durable: true}, ApplicationProperties: props("native-value-map"),
			Value: map[string]any{"k": uint32(1), "t": created, "nested": map[string]any{"l": []any{int8(1), "x"}}}},
		{Header: &amqp.MessageHeader{Durable: true}, ApplicationProperties: props("native-value-list"),
			Value: []any{uuid, "s", []byte{1}, int16(-2), nil, []any{uint64(1)}}},
		{Header: &amqp.MessageHeader{Durable: true}, ApplicationProperties: props("native-value-timestamp"), Value: created},
		{Header: &amqp.MessageHeader{Durable: true, Priority: 1}, Annotations: amqp.Annotations{"x-opt-custom": "kept", "x-custom-int": int64(3)},
			ApplicationProperties: props("native-annotations"), Value: "text with custom annotations"},
		{Header: &amqp.MessageHeader{Durable: true}, ApplicationProperties: props("native-large-data"), Data: [][]byte{bytes.Repeat([]byte("0123456789abcdef"), 11<<16)}},
	}
}

// TestMove_FidelityOfAMQPNativeMessages moves nativeMessages and compares them field by field
// before and after, raw and as Qpid JMS sees them.
func TestMove_FidelityOfAMQPNativeMessages(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.native", 0)
	msgs := nativeMessages()
	sendNative(t, ctx, env, src, msgs)
	n := len(msgs)
	j := newJMSClient(t, ctx, env)
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)
	beforeAMQP := j.dump(t, ctx, "source", "amqp", src, "browse", n)
	dupPrefix, err := fidelityMove(t, ctx, env, src, tgt, n)
	if err != nil {
		t.Fatal(err)
	}
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)
	afterAMQP := j.dump(t, ctx, "target", "amqp", tgt, "browse", n)
	compareRaw(t, beforeRaw, afterRaw, dupPrefix)
	jmsComparison{view: "Qpid JMS browser", src: src, tgt: tgt, dupPrefix: dupPrefix, sameMessages: true}.compare(t, beforeAMQP, afterAMQP)
	for _, m := range msgs {
		fid, _ := m.ApplicationProperties["fid"].(string)
		if d := rawDiff(m, withoutDuplicateID(t, afterRaw[fid], dupPrefix), "properties.to", "header.delivery-count"); len(d) > 0 {
			t.Errorf("raw AMQP: %s differs (as sent → target):\n\t%s", fid, strings.Join(d, "\n\t"))
		}
	}
}

// sendNative sends msgs to queue on the source broker with go-amqp, as the admin user.
func sendNative(t *testing.T, ctx context.Context, env *testenv.Env, queue string, msgs []*amqp.Message) {
	t.Helper()
	conn, err := testenv.Client(t, env, "source", true).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	snd, err := conn.NewSender(ctx, artemis.FQQN(queue, queue), artemis.SenderOptions{AllowNonDurable: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		p, err := snd.Send(ctx, m)
		if err == nil {
			err = p.Wait(ctx)
		}
		if err != nil {
			t.Fatalf("sending %v: %v", m.ApplicationProperties["fid"], err)
		}
	}
}
