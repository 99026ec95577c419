package move

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// Fidelity of messages from Artemis's own CLI (Core) and from STOMP clients: they gain no property.

// listDifferences lists how a message's management view (listMessages) on the target differs
// from its view on the source, leaving out what a relay of a message stored as Core is known
// to change (the resource page's "What arrives on the target" and "Known limitations"):
//   - added, by the relay: _AMQ_DUPL_ID;
//   - added, by the source broker's conversion of a Core message to AMQP for the relay: the
//     annotations x-opt-jms-msg-type, x-opt-jms-dest and x-opt-jms-reply-to (the JMS kind of
//     message and of destination), and the AMQP fields creationTime (= timestamp) and replyTo
//     (= the Core JMSReplyTo, which is gone);
//   - added, in the target's management view of any AMQP message: _AMQ_AD, the address the
//     message was sent to, which the broker keeps beside the message;
//   - gone: __AMQ_CID (the Core producer's connection id, which the conversion drops),
//     _AMQ_ROUTING_TYPE (the relay removes the routing type), type (the Core message type);
//   - changed: messageID (each broker's own), address (the target's), and userID, which the
//     view of an AMQP message writes as "ID:" + its message-id.
func listDifferences(src, tgt map[string]any) []string {
	added := map[string]bool{propDuplicateID: true, "x-opt-jms-msg-type": true, "x-opt-jms-dest": true,
		"x-opt-jms-reply-to": true, "creationTime": true, "replyTo": true, "_AMQ_AD": true}
	gone := map[string]bool{"__AMQ_CID": true, propRoutingType: true, "type": true, "JMSReplyTo": true}
	var diffs []string
	for _, k := range unionKeys(src, tgt) {
		sv, sok := src[k]
		tv, tok := tgt[k]
		switch {
		case !sok && !added[k]:
			diffs = append(diffs, fmt.Sprintf("%s: absent on the source, %v on the target", k, tv))
		case !tok && !gone[k]:
			diffs = append(diffs, fmt.Sprintf("%s: %v on the source, absent on the target", k, sv))
		case !sok || !tok || k == "messageID" || k == "address":
		case k == "userID":
			if tv != "ID:"+fmt.Sprint(sv) {
				diffs = append(diffs, fmt.Sprintf("userID: %v on the source, %v on the target", sv, tv))
			}
		case !reflect.DeepEqual(sv, tv):
			diffs = append(diffs, fmt.Sprintf("%s: %v on the source, %v on the target", k, sv, tv))
		}
	}
	if r, ok := src["JMSReplyTo"]; ok && tgt["replyTo"] != r {
		diffs = append(diffs, fmt.Sprintf("JMSReplyTo %v on the source, replyTo %v on the target", r, tgt["replyTo"]))
	}
	return diffs
}

// TestMove_CoreAndSTOMPMessagesGainNoProperty moves messages produced by Artemis's own CLI
// producer (Core JMS) and by STOMP frames (one with a reply-to given as a plain name) and
// compares each, property by property, in the management view an operator has (listMessages)
// on the source and on the target, allowing only what listDifferences documents. In
// particular: the null JMSXDeliveryCount that the source broker's Core-to-AMQP conversion adds
// to every such message does not reach the target (core.Worker.OutgoingCopy drops it); the Core producer's
// connection id __AMQ_CID does not either, as the resource page says; and a Core JMS consumer
// on the target reads the plain reply-to name as queue://replies, as it says too.
func TestMove_CoreAndSTOMPMessagesGainNoProperty(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.props", 0)
	for i := 1; i <= 2; i++ {
		env.Produce(t, "source", src, 1, "--properties", fmt.Sprintf(`[{"type":"string","key":"fid","value":"core-%d"}]`, i))
	}
	transfertest.SendSTOMP(t, ctx, env, "source", src, []map[string]string{
		{"fid": "stomp-reply-to", "reply-to": "replies", "persistent": "true", "custom": "kept"},
		{"fid": "stomp-plain"},
	})
	const n = 4
	srcAdmin, tgtAdmin := testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	before := transfertest.ListedByFid(t, ctx, srcAdmin, src, n)
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)
	for fid, m := range before {
		if _, ok := m["JMSXDeliveryCount"]; ok {
			t.Fatalf("%s carries JMSXDeliveryCount on the source: %v", fid, m)
		}
		// What the relay receives: the broker's conversion has added it, null.
		if v, ok := beforeRaw[fid].ApplicationProperties[propJMSXDeliveryCount]; !ok || v != nil {
			t.Errorf("%s as the relay receives it: JMSXDeliveryCount %v (present %v), want present and null, as the conversion writes it", fid, v, ok)
		}
		if _, ok := m["__AMQ_CID"]; strings.HasPrefix(fid, "core-") && !ok {
			t.Errorf("%s has no __AMQ_CID on the source: %v", fid, m)
		}
	}
	dupPrefix, err := fidelityMove(t, ctx, env, src, tgt, n)
	if err != nil {
		t.Fatal(err)
	}
	after := transfertest.ListedByFid(t, ctx, tgtAdmin, tgt, n)
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)
	for _, fid := range sortedKeys(before) {
		if d := listDifferences(before[fid], after[fid]); len(d) > 0 {
			t.Errorf("listMessages: %s differs (source → target):\n\t%s", fid, strings.Join(d, "\n\t"))
		}
		if _, ok := afterRaw[fid].ApplicationProperties[propJMSXDeliveryCount]; ok {
			t.Errorf("%s arrives with application property JMSXDeliveryCount", fid)
		}
		if id, _ := after[fid][propDuplicateID].(string); !strings.HasPrefix(id, dupPrefix) {
			t.Errorf("%s: duplicate id %q, want one starting with %q", fid, id, dupPrefix)
		}
	}
	j := newJMSClient(t, ctx, env)
	core := j.dump(t, ctx, "target", "core", tgt, "browse", n)
	if got := core["stomp-reply-to"].Fields["JMSReplyTo"]; got != "queue:replies" {
		t.Errorf("Core JMS view on the target: JMSReplyTo %q, want the queue replies (the resource page says so)", got)
	}
}
