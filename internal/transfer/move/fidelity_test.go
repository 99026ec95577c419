package move

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// The fidelity tests produce messages with clients other than ours (Artemis's Core JMS client
// and Qpid JMS over AMQP, both shipped with Artemis; see testdata/Fidelity.java), look at them
// on the source before a move and on the target after it, and compare them field by field in
// three views: a Core JMS consumer's, an AMQP JMS consumer's and the raw AMQP message.

// TestMove_FidelityOfJMSMessagesFromCoreAndAMQPClients moves messages of every JMS type,
// produced by Artemis's Core JMS client and by Qpid JMS over AMQP (testdata/Fidelity.java):
// text (also null), bytes, map and stream with typed entries, serialized object, body-less
// Message, an AMQP-typed object body (an amqp-value list), with properties of every JMS type,
// priorities 0 to 9, persistent and not, correlation ids (string and bytes), reply-to,
// JMSType, group id and sequence, user id, a TTL and 10 MiB bodies from both clients.
//
// It compares every field, before the move on the source and after it on the target, in
// three views: a Qpid JMS browser's (exactly, JMSMessageID and JMSTimestamp included), the raw
// AMQP message (header, properties, annotations, application properties, body sections,
// footer) and a Core JMS browser's (allowing only what the AMQP leg changes, see
// amqpLegInCoreView). Then a Core JMS consumer must receive the same from the target as from
// a control copy never moved (ids and timestamps aside: it was produced separately).
// Expiry is left to TestMove_PreservesAbsoluteExpiry.
func TestMove_FidelityOfJMSMessagesFromCoreAndAMQPClients(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 10*time.Minute)
	start := time.Now()
	src, tgt, controls := fidelityQueues(t, ctx, env, "fidelity", 1)
	control := controls[0]
	j := newJMSClient(t, ctx, env)

	fids := j.produceFromBoth(t, ctx, "fidelity", src, control)
	n := len(fids)
	t.Logf("produced %d messages twice (%s): %s", n, time.Since(start).Round(time.Millisecond), strings.Join(fids, " "))

	beforeCore := j.dump(t, ctx, "source", "core", src, "browse", n)
	beforeAMQP := j.dump(t, ctx, "source", "amqp", src, "browse", n)
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)
	dupPrefix, err := fidelityMove(t, ctx, env, src, tgt, n)
	if err != nil {
		t.Fatal(err)
	}
	afterCore := j.dump(t, ctx, "target", "core", tgt, "browse", n)
	afterAMQP := j.dump(t, ctx, "target", "amqp", tgt, "browse", n)
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)

	jmsComparison{view: "Qpid JMS browser", src: src, tgt: tgt, dupPrefix: dupPrefix, sameMessages: true,
		ignore: []string{"JMSExpiration"}}.compare(t, beforeAMQP, afterAMQP)
	compareRaw(t, beforeRaw, afterRaw, dupPrefix, "header.ttl", "properties.absolute-expiry-time")
	jmsComparison{view: "Core JMS browser", src: src, tgt: tgt, dupPrefix: dupPrefix, coreLeg: true, sameMessages: true,
		ignore: []string{"JMSExpiration"}}.compare(t, beforeCore, afterCore)

	controlCore := j.dump(t, ctx, "source", "core", control, "consume", n)
	targetCore := j.dump(t, ctx, "target", "core", tgt, "consume", n)
	jmsComparison{view: "Core JMS consumer, control copy → target", src: control, tgt: tgt, dupPrefix: dupPrefix, coreLeg: true,
		ignore: []string{"JMSExpiration", "JMSTimestamp"}}.compare(t, controlCore, targetCore)
	t.Logf("fidelity of %d messages checked in %s", n, time.Since(start).Round(time.Millisecond))
}

// TestMove_UndecodableMessageStopsTheRunAndIsReturned: JMS map and stream messages may hold
// char entries, which the source broker sends to the relay as AMQP char values; go-amqp cannot
// decode those. The run must stop with a clear error, every message still staged, and a return
// must put every message back on the source. (A known limitation: such messages cannot be moved.)
func TestMove_UndecodableMessageStopsTheRunAndIsReturned(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.char", 0)
	j := newJMSClient(t, ctx, env)
	fids := j.produceFromBoth(t, ctx, "char", src)
	n := len(fids)
	moveCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, err := fidelityMove(t, moveCtx, env, src, tgt, n) // returns the run when it fails
	if err == nil || !strings.Contains(err.Error(), "cannot decode") {
		t.Fatalf("want the run to stop on a message it cannot decode, got %v", err)
	}
	if got := transfertest.QueueDepth(t, ctx, testenv.Client(t, env, "source", true), src) + transfertest.QueueDepth(t, ctx, testenv.Client(t, env, "target", true), tgt); got != int64(n) {
		t.Fatalf("source and target hold %d of the %d messages (%s)", got, n, strings.Join(fids, ", "))
	}
}

// TestMove_UnconvertibleMessageIsQuarantinedNotLost moves a Core StreamMessage with a byte[]
// entry, which JMS allows. Artemis cannot convert it to AMQP and dead-letters it when the relay
// receives it. Staging's dead-letter address is the run's quarantine queue, so the message is
// parked, the run reports it instead of finishing, and a return puts it back on the source.
// (An AMQP browser dead-letters it too, so the source is browsed with Core JMS only.)
func TestMove_UnconvertibleMessageIsQuarantinedNotLost(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.streambytes", 0)
	j := newJMSClient(t, ctx, env)
	fids := j.produce(t, ctx, "source", "core", "stream-bytes", src)
	n := len(fids)
	before := j.dump(t, ctx, "source", "core", src, "browse", n)
	moveCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, err := fidelityMove(t, moveCtx, env, src, tgt, n) // returns the run when it fails
	if !errors.Is(err, errQuarantined) || !strings.Contains(err.Error(), ".quarantine") {
		t.Fatalf("want the run to report quarantined messages, got %v", err)
	}
	if got := transfertest.QueueDepth(t, ctx, testenv.Client(t, env, "source", true), src); got != int64(n) {
		t.Fatalf("after the return the source holds %d of the %d messages (%s)", got, n, strings.Join(fids, ", "))
	}
	after := j.dump(t, ctx, "source", "core", src, "browse", n)
	for fid, b := range before {
		if a, ok := after[fid]; !ok || a.Fields["JMSType"] != b.Fields["JMSType"] {
			t.Errorf("%s is not back on the source as it was", fid)
		}
	}
}

// TestMove_PreservesAbsoluteExpiry: Artemis's broker-side move resets the staged copy's expiry
// to 0 (QueueImpl.makeCopy); the run records each expiring message's expiry before staging it
// and the relay gives it back. Messages with a TTL from Core and Qpid JMS producers arrive on the
// target with the same JMSExpiration in both JMS views and the same absolute-expiry-time in the
// raw AMQP view; messages without one arrive without one.
func TestMove_PreservesAbsoluteExpiry(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.expiry", 0)
	j := newJMSClient(t, ctx, env)
	fids := j.produceFromBoth(t, ctx, "expiry", src)
	n := len(fids)
	ttls := map[string]int64{"ttl-text": 3_600_000, "ttl-bytes": 7_200_000, "no-ttl": 0}
	before := map[string]map[string]jmsView{
		"Core JMS": j.dump(t, ctx, "source", "core", src, "browse", n),
		"Qpid JMS": j.dump(t, ctx, "source", "amqp", src, "browse", n),
	}
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)
	expiring := 0
	for view, msgs := range before {
		for fid, m := range msgs {
			ttl := ttls[strings.SplitN(fid, "-", 2)[1]]
			exp, ts := m.Fields["JMSExpiration"], m.Fields["JMSTimestamp"]
			if (ttl == 0 && exp != "0") || (ttl != 0 && exp != fmt.Sprint(mustInt(t, ts)+ttl)) {
				t.Fatalf("%s on the source: %s has JMSExpiration %s and JMSTimestamp %s, want a TTL of %d ms", view, fid, exp, ts, ttl)
			}
			if ttl != 0 && view == "Core JMS" {
				expiring++
			}
		}
	}

	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
	res, err := e.Move(ctx, core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt}})
	if err != nil {
		returnStaged(t, e, res.RunID)
		t.Fatal(err)
	}
	if res.Relayed != int64(n) || res.ExpiryKept != int64(expiring) || res.ExpiryLost != 0 {
		t.Errorf("run relayed %d (want %d), kept %d expiries (want %d), lost %d", res.Relayed, n, res.ExpiryKept, expiring, res.ExpiryLost)
	}
	after := map[string]map[string]jmsView{
		"Core JMS": j.dump(t, ctx, "target", "core", tgt, "browse", n),
		"Qpid JMS": j.dump(t, ctx, "target", "amqp", tgt, "browse", n),
	}
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)
	for _, view := range sortedKeys(before) {
		for _, fid := range fids {
			w, g := before[view][fid].Fields, after[view][fid].Fields
			if g["JMSExpiration"] != w["JMSExpiration"] {
				t.Errorf("%s: %s: JMSExpiration %s on the source, %s on the target", view, fid, w["JMSExpiration"], g["JMSExpiration"])
			}
		}
	}
	for _, fid := range fids {
		w, g := beforeRaw[fid], afterRaw[fid]
		if we, ge := transfertest.AbsoluteExpiry(w), transfertest.AbsoluteExpiry(g); we != ge {
			t.Errorf("raw AMQP: %s: absolute-expiry-time %d on the source, %d on the target", fid, we, ge)
		}
		if (transfertest.AbsoluteExpiry(w) != 0) != (g.Header != nil && g.Header.TTL > 0) {
			t.Errorf("raw AMQP: %s: header ttl %s on the source, %s on the target", fid, headerTTL(w), headerTTL(g))
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func headerTTL(m *amqp.Message) string {
	if m.Header == nil {
		return "absent"
	}
	return m.Header.TTL.String()
}
