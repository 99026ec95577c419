package copying

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// The declared changes of a copy: the rows of the resource page's "Fidelity" table (What
// arrives on the target) for a copy, each asserted as the row says it. A move's side of the
// rows it shares is tested in internal/transfer/move, beside the move's fidelity tests.

// fidelityCopy copies the fixture's source queue to its target queue and fails unless the copy
// puts want messages there.
func (f *copyFixture) fidelityCopy(t *testing.T, ctx context.Context, want int) {
	t.Helper()
	res, err := f.engine(t, core.Options{}).Copy(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Relayed != int64(want) {
		t.Fatalf("the copy put %d messages on the target, want %d", res.Relayed, want)
	}
}

// rawByFid browses a queue over AMQP and returns its messages by the application property fid.
func (f *copyFixture) rawByFid(t *testing.T, ctx context.Context, broker, queue string) map[string]*amqp.Message {
	t.Helper()
	c := f.srcAdmin
	if broker == "target" {
		c = f.tgtAdmin
	}
	out := map[string]*amqp.Message{}
	for _, m := range transfertest.BrowseAll(t, ctx, c, queue) {
		out[fmt.Sprint(m.ApplicationProperties["fid"])] = m
	}
	return out
}

// TestCopy_CoreConnectionIDIsNotCarried: a message produced over Core carries its producer's
// connection id __AMQ_CID on the source; copied, it arrives without it (the source broker's
// conversion for the copy's AMQP browse leaves it out).
func TestCopy_CoreConnectionIDIsNotCarried(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	f := newCopyFixture(t, ctx, "fidelity.cid", 0, false)
	f.env.Produce(t, "source", f.src, 1, "--properties", `[{"type":"string","key":"fid","value":"core-cid"}]`)
	before := transfertest.ListedByFid(t, ctx, f.srcAdmin, f.src, 1)
	if _, ok := before["core-cid"]["__AMQ_CID"]; !ok {
		t.Fatalf("the Core message has no __AMQ_CID on the source: %v", before["core-cid"])
	}
	f.fidelityCopy(t, ctx, 1)
	after := transfertest.ListedByFid(t, ctx, f.tgtAdmin, f.tgt, 1)
	if v, ok := after["core-cid"]["__AMQ_CID"]; ok {
		t.Errorf("the Core message arrives with __AMQ_CID %v; the resource page says it is not carried", v)
	}
}

// TestCopy_STOMPPlainReplyToArrivesAsQueueAddress: a STOMP reply-to given as the bare name
// reply.queue arrives, copied, as the AMQP reply-to reply.queue of the kind queue, which a
// STOMP consumer on the target reads as queue://reply.queue. (The Core JMS view of the same
// AMQP message is asserted for a move, in TestFidelity_STOMPPlainReplyToArrivesAsQueueAddress.)
func TestCopy_STOMPPlainReplyToArrivesAsQueueAddress(t *testing.T) {
	const fid = "stomp-reply-to"
	ctx := transfertest.Ctx(t, 5*time.Minute)
	f := newCopyFixture(t, ctx, "fidelity.replyto", 0, false)
	transfertest.SendSTOMP(t, ctx, f.env, "source", f.src, []map[string]string{{"fid": fid, "reply-to": "reply.queue"}})
	before := transfertest.ListedByFid(t, ctx, f.srcAdmin, f.src, 1)
	if got := before[fid]["JMSReplyTo"]; got != "reply.queue" {
		t.Fatalf("on the source the STOMP message's JMSReplyTo is %v, want reply.queue", got)
	}
	f.fidelityCopy(t, ctx, 1)
	raw := f.rawByFid(t, ctx, "target", f.tgt)[fid]
	if raw == nil {
		t.Fatalf("no message %s on the target", fid)
	}
	if raw.Properties == nil || raw.Properties.ReplyTo == nil || *raw.Properties.ReplyTo != "reply.queue" {
		t.Errorf("raw AMQP on the target: reply-to %v, want reply.queue", raw.Properties)
	}
	if kind := raw.Annotations["x-opt-jms-reply-to"]; fmt.Sprint(kind) != "0" {
		t.Errorf("raw AMQP on the target: x-opt-jms-reply-to %v, want 0 (a queue)", kind)
	}
	if got := transfertest.ReceiveSTOMP(t, ctx, f.env, "target", f.tgt)["reply-to"]; got != "queue://reply.queue" {
		t.Errorf("a STOMP consumer on the target reads reply-to %q, want queue://reply.queue", got)
	}
}

// TestCopy_CoreMessagesGainNullJMSXDeliveryCount: a copy of a message stored as Core (here from
// Artemis's CLI producer and from a STOMP frame) arrives with the application property
// JMSXDeliveryCount, null, which it did not have on the source. The source broker's conversion
// to AMQP writes it; a move drops it (its staging move marks the message as stored as Core, see
// core.Worker.OutgoingCopy), but a browse shows no such mark, and an AMQP producer's own null
// JMSXDeliveryCount is carried, so a copy cannot tell the two apart.
func TestCopy_CoreMessagesGainNullJMSXDeliveryCount(t *testing.T) {
	const jmsx = "JMSXDeliveryCount"
	ctx := transfertest.Ctx(t, 5*time.Minute)
	f := newCopyFixture(t, ctx, "fidelity.jmsx", 0, false)
	f.env.Produce(t, "source", f.src, 1, "--properties", `[{"type":"string","key":"fid","value":"core-cli"}]`)
	transfertest.SendSTOMP(t, ctx, f.env, "source", f.src, []map[string]string{{"fid": "stomp-plain"}})
	before := transfertest.ListedByFid(t, ctx, f.srcAdmin, f.src, 2)
	f.fidelityCopy(t, ctx, 2)
	after := transfertest.ListedByFid(t, ctx, f.tgtAdmin, f.tgt, 2)
	raw := f.rawByFid(t, ctx, "target", f.tgt)
	for _, fid := range []string{"core-cli", "stomp-plain"} {
		if v, ok := before[fid][jmsx]; ok {
			t.Fatalf("%s has JMSXDeliveryCount %v on the source", fid, v)
		}
		if v, ok := after[fid][jmsx]; !ok || fmt.Sprint(v) != "" {
			t.Errorf("listMessages on the target: %s has JMSXDeliveryCount %v (present %v), want present and null", fid, v, ok)
		}
		if m := raw[fid]; m == nil {
			t.Errorf("no message %s on the target", fid)
		} else if v, ok := m.ApplicationProperties[jmsx]; !ok || v != nil {
			t.Errorf("raw AMQP on the target: %s has JMSXDeliveryCount %v (present %v), want present and null", fid, v, ok)
		}
	}
}

// TestCopy_SourceCoreObjectMessageGainsContentTypeWhenBrowsed: the one change a copy makes to
// its source. The copy's AMQP browse of a Core ObjectMessage makes the source broker add the
// property JMS_AMQP_ContentType = application/x-java-serialized-object to the stored message
// (its conversion to AMQP records the content type in the message itself). Nothing else of it
// changes, and a Core TextMessage beside it does not change at all.
func TestCopy_SourceCoreObjectMessageGainsContentTypeWhenBrowsed(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	f := newCopyFixture(t, ctx, "fidelity.object", 0, false)
	f.env.Produce(t, "source", f.src, 1, "--object-size", "100", "--properties", `[{"type":"string","key":"fid","value":"core-object"}]`)
	f.env.Produce(t, "source", f.src, 1, "--text-size", "100", "--properties", `[{"type":"string","key":"fid","value":"core-text"}]`)
	before := transfertest.ListedByFid(t, ctx, f.srcAdmin, f.src, 2)
	if got := fmt.Sprint(before["core-object"]["type"]); got != "2" {
		t.Fatalf("core-object has the Core type %s on the source, want 2 (an ObjectMessage)", got)
	}
	f.fidelityCopy(t, ctx, 2)
	after := transfertest.ListedByFid(t, ctx, f.srcAdmin, f.src, 2)
	const added, contentType = "JMS_AMQP_ContentType", "application/x-java-serialized-object"
	for _, fid := range []string{"core-object", "core-text"} {
		keys := map[string]bool{}
		for k := range before[fid] {
			keys[k] = true
		}
		for k := range after[fid] {
			keys[k] = true
		}
		for k := range keys {
			b, inBefore := before[fid][k]
			a, inAfter := after[fid][k]
			switch {
			case fid == "core-object" && k == added:
				if inBefore || a != contentType {
					t.Errorf("%s on the source: %s %v before the copy (present %v), %v after it; want absent, then %s", fid, k, b, inBefore, a, contentType)
				}
			case inBefore != inAfter || !reflect.DeepEqual(b, a):
				t.Errorf("%s on the source: %s %v before the copy (present %v), %v after it (present %v)", fid, k, b, inBefore, a, inAfter)
			}
		}
	}
	if _, ok := after["core-object"][added]; !ok {
		t.Errorf("core-object on the source has no %s after the copy", added)
	}
}
