package move

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// The raw AMQP view of the fidelity tests: each message as AMQP delivers it, compared field by
// field before and after a move.

// browseRaw returns the messages of a queue as AMQP delivers them, by fid.
func browseRaw(t *testing.T, ctx context.Context, env *testenv.Env, broker, queue string, count int) map[string]*amqp.Message {
	t.Helper()
	conn, err := testenv.Client(t, env, broker, true).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b, err := conn.NewBrowser(ctx, artemis.FQQN(queue, queue), artemis.BrowserOptions{Credit: 100, IdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	out := map[string]*amqp.Message{}
	for i := 0; i < count+10; i++ {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		fid, _ := msg.ApplicationProperties["fid"].(string)
		out[fid] = msg
	}
	if len(out) != count {
		t.Fatalf("AMQP browse of %s on %s: %d messages, want %d (%s)", queue, broker, len(out), count, strings.Join(sortedKeys(out), ", "))
	}
	return out
}

// rawDiff lists the fields in which two AMQP messages differ, skipping the named fields
// ("header.ttl", "properties.to", "annotation x-opt-jms-dest", ...).
func rawDiff(want, got *amqp.Message, skip ...string) []string {
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	var diffs []string
	add := func(field string, w, g any) {
		if !skipped[field] && !reflect.DeepEqual(canonicalValue(w), canonicalValue(g)) {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", field, transfertest.Describe(w), transfertest.Describe(g)))
		}
	}
	var wh, gh amqp.MessageHeader
	if want.Header != nil {
		wh = *want.Header
	}
	if got.Header != nil {
		gh = *got.Header
	}
	add("header.durable", wh.Durable, gh.Durable)
	add("header.priority", wh.Priority, gh.Priority)
	add("header.ttl", wh.TTL, gh.TTL)
	add("header.first-acquirer", wh.FirstAcquirer, gh.FirstAcquirer)
	add("header.delivery-count", wh.DeliveryCount, gh.DeliveryCount)
	var wp, gp amqp.MessageProperties
	if want.Properties != nil {
		wp = *want.Properties
	}
	if got.Properties != nil {
		gp = *got.Properties
	}
	add("properties.message-id", wp.MessageID, gp.MessageID)
	add("properties.user-id", wp.UserID, gp.UserID)
	add("properties.to", wp.To, gp.To)
	add("properties.subject", wp.Subject, gp.Subject)
	add("properties.reply-to", wp.ReplyTo, gp.ReplyTo)
	add("properties.correlation-id", wp.CorrelationID, gp.CorrelationID)
	add("properties.content-type", wp.ContentType, gp.ContentType)
	add("properties.content-encoding", wp.ContentEncoding, gp.ContentEncoding)
	add("properties.absolute-expiry-time", wp.AbsoluteExpiryTime, gp.AbsoluteExpiryTime)
	add("properties.creation-time", wp.CreationTime, gp.CreationTime)
	add("properties.group-id", wp.GroupID, gp.GroupID)
	add("properties.group-sequence", wp.GroupSequence, gp.GroupSequence)
	add("properties.reply-to-group-id", wp.ReplyToGroupID, gp.ReplyToGroupID)
	for _, k := range unionKeys(annotationMap(want.DeliveryAnnotations), annotationMap(got.DeliveryAnnotations)) {
		add("delivery-annotation "+k, annotationMap(want.DeliveryAnnotations)[k], annotationMap(got.DeliveryAnnotations)[k])
	}
	for _, k := range unionKeys(annotationMap(want.Annotations), annotationMap(got.Annotations)) {
		add("annotation "+k, annotationMap(want.Annotations)[k], annotationMap(got.Annotations)[k])
	}
	for _, k := range unionKeys(want.ApplicationProperties, got.ApplicationProperties) {
		add("application-property "+k, want.ApplicationProperties[k], got.ApplicationProperties[k])
	}
	add("body data", want.Data, got.Data)
	add("body value", want.Value, got.Value)
	add("body sequence", want.Sequence, got.Sequence)
	for _, k := range unionKeys(annotationMap(want.Footer), annotationMap(got.Footer)) {
		add("footer "+k, annotationMap(want.Footer)[k], annotationMap(got.Footer)[k])
	}
	add("message-format", want.Format, got.Format)
	return diffs
}

// canonicalValue makes equal timestamps DeepEqual, however their location is recorded.
func canonicalValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return "timestamp " + x.UTC().Format(time.RFC3339Nano)
	case *time.Time:
		if x == nil {
			return nil
		}
		return canonicalValue(*x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = canonicalValue(e)
		}
		return m
	case map[any]any:
		m := make(map[any]any, len(x))
		for k, e := range x {
			m[k] = canonicalValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = canonicalValue(e)
		}
		return l
	case [][]any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = canonicalValue(e)
		}
		return l
	}
	return v
}

func annotationMap(a amqp.Annotations) map[string]any {
	m := make(map[string]any, len(a))
	for k, v := range a {
		m[fmt.Sprint(k)] = v
	}
	return m
}

// compareRaw fails for every message whose raw AMQP form differs before and after the move.
// "to" is left out of rawDiff: the relay drops it (see core.Worker.OutgoingCopy), so it must be absent on
// the target.
func compareRaw(t *testing.T, want, got map[string]*amqp.Message, dupPrefix string, skip ...string) {
	t.Helper()
	for _, fid := range unionKeys(want, got) {
		w, wok := want[fid]
		g, gok := got[fid]
		if !wok || !gok {
			t.Errorf("raw AMQP: message %s is on one side only (source %v, target %v)", fid, wok, gok)
			continue
		}
		if g.Properties != nil && g.Properties.To != nil {
			t.Errorf("raw AMQP: %s: to %q on the target, want none", fid, *g.Properties.To)
		}
		g = withoutDuplicateID(t, g, dupPrefix)
		if d := rawDiff(w, g, append(skip, "properties.to")...); len(d) > 0 {
			t.Errorf("raw AMQP: %s differs (source → target):\n\t%s", fid, strings.Join(d, "\n\t"))
		}
	}
}

// withoutDuplicateID checks the relay's duplicate id on a relayed message and returns the
// message without it.
func withoutDuplicateID(t *testing.T, msg *amqp.Message, dupPrefix string) *amqp.Message {
	t.Helper()
	fid := msg.ApplicationProperties["fid"]
	if id, _ := msg.ApplicationProperties[propDuplicateID].(string); !strings.HasPrefix(id, dupPrefix) {
		t.Errorf("raw AMQP: %v: duplicate id %q, want one starting with %q", fid, id, dupPrefix)
	}
	out := *msg
	out.ApplicationProperties = make(map[string]any, len(msg.ApplicationProperties))
	for k, v := range msg.ApplicationProperties {
		if k != propDuplicateID {
			out.ApplicationProperties[k] = v
		}
	}
	return &out
}
