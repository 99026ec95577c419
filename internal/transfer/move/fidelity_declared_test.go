package move

import (
	"fmt"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// The declared changes of a move: the rows of the resource page's "Fidelity" table (What
// arrives on the target) that a move shares, each asserted as the row says it. The copy's side
// of each row is tested in internal/transfer/copying, beside the copy's fidelity tests.

// TestFidelity_CoreConnectionIDIsNotCarried: a message produced over Core carries its
// producer's connection id __AMQ_CID on the source; moved, it arrives without it (the source
// broker's conversion to AMQP leaves it out).
func TestFidelity_CoreConnectionIDIsNotCarried(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.cid", 0)
	env.Produce(t, "source", src, 1, "--properties", `[{"type":"string","key":"fid","value":"core-cid"}]`)
	before := transfertest.ListedByFid(t, ctx, testenv.Client(t, env, "source", true), src, 1)
	if _, ok := before["core-cid"]["__AMQ_CID"]; !ok {
		t.Fatalf("the Core message has no __AMQ_CID on the source: %v", before["core-cid"])
	}
	if _, err := fidelityMove(t, ctx, env, src, tgt, 1); err != nil {
		t.Fatal(err)
	}
	after := transfertest.ListedByFid(t, ctx, testenv.Client(t, env, "target", true), tgt, 1)
	if v, ok := after["core-cid"]["__AMQ_CID"]; ok {
		t.Errorf("the Core message arrives with __AMQ_CID %v; the resource page says it is not carried", v)
	}
}

// TestFidelity_STOMPPlainReplyToArrivesAsQueueAddress: a STOMP reply-to given as the bare name
// reply.queue arrives, moved, as the AMQP reply-to reply.queue of the kind queue (the source
// broker's conversion sets the kind), which the target gives back as a queue: a Core JMS
// consumer's JMSReplyTo is the queue reply.queue, and a STOMP consumer's reply-to header is
// queue://reply.queue where the producer wrote reply.queue.
func TestFidelity_STOMPPlainReplyToArrivesAsQueueAddress(t *testing.T) {
	const fid = "stomp-reply-to"
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.replyto", 0)
	transfertest.SendSTOMP(t, ctx, env, "source", src, []map[string]string{{"fid": fid, "reply-to": "reply.queue"}})
	before := transfertest.ListedByFid(t, ctx, testenv.Client(t, env, "source", true), src, 1)
	if got := before[fid]["JMSReplyTo"]; got != "reply.queue" {
		t.Fatalf("on the source the STOMP message's JMSReplyTo is %v, want reply.queue", got)
	}
	if _, err := fidelityMove(t, ctx, env, src, tgt, 1); err != nil {
		t.Fatal(err)
	}
	raw := browseRaw(t, ctx, env, "target", tgt, 1)[fid]
	if raw.Properties == nil || raw.Properties.ReplyTo == nil || *raw.Properties.ReplyTo != "reply.queue" {
		t.Errorf("raw AMQP on the target: reply-to %v, want reply.queue", raw.Properties)
	}
	if kind := raw.Annotations["x-opt-jms-reply-to"]; fmt.Sprint(kind) != "0" {
		t.Errorf("raw AMQP on the target: x-opt-jms-reply-to %v (%T), want 0 (a queue)", kind, kind)
	}
	coreView := newJMSClient(t, ctx, env).dump(t, ctx, "target", "core", tgt, "browse", 1)
	if got := coreView[fid].Fields["JMSReplyTo"]; got != "queue:reply.queue" {
		t.Errorf("Core JMS view on the target: JMSReplyTo %q, want the queue reply.queue", got)
	}
	if got := transfertest.ReceiveSTOMP(t, ctx, env, "target", tgt)["reply-to"]; got != "queue://reply.queue" {
		t.Errorf("a STOMP consumer on the target reads reply-to %q, want queue://reply.queue", got)
	}
}
