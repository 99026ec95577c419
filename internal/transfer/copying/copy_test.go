package copying

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

func TestCopy_10000MessagesTargetHoldsExactlyTheSelectionAndTheSourceIsUnchanged(t *testing.T) {
	ctx := transfertest.Ctx(t, 15*time.Minute)
	f := newCopyFixture(t, ctx, "copy10k", 10_000, true)
	before := sourceSnapshot(t, ctx, f.srcAdmin, f.src)
	if len(before) != 10_000 {
		t.Fatalf("browsed %d source messages, produced 10000", len(before))
	}
	started := time.Now()
	var last atomic.Value
	// The browse of a whole queue that nobody consumes from ends once it has delivered every
	// message the queue holds, not after an idle timeout: with a 10-minute one, a copy that
	// waited it out could not end sooner.
	const idle = 10 * time.Minute
	res, err := f.engine(t, core.Options{BatchSize: 500, CopyIdleTimeout: idle, Progress: func(p core.Progress) { last.Store(p) }}).Copy(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took >= idle {
		t.Errorf("the copy took %s: it waited out the idle timeout instead of ending at the queue's count", took)
	}
	if p, _ := last.Load().(core.Progress); p.Moved != 10_000 || p.Selected != 10_000 {
		t.Errorf("the last progress report says %d of %d copied, want 10000 of 10000", p.Moved, p.Selected)
	}
	t.Logf("copied %d messages in %s (%.0f msg/s)", res.Relayed,
		time.Since(started).Round(time.Millisecond), float64(res.Relayed)/time.Since(started).Seconds())
	if res.Relayed != 10_000 || res.RelayedTotal != 10_000 || res.CopySkipped != 0 || res.CopyIndistinguishable != 0 {
		t.Errorf("result %+v, want 10000 copied, none skipped or indistinguishable", res)
	}
	checkSameSnapshot(t, before, sourceSnapshot(t, ctx, f.srcAdmin, f.src))
	if d := transfertest.QueueDepth(t, ctx, f.srcAdmin, f.src); d != 10_000 {
		t.Errorf("the source queue holds %d messages after the copy, want 10000", d)
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	checkCopyRun(t, ctx, f.ledger, res.RunID, 10_000)
	// A copy applied again after it completed starts a new run: a new t0, a new selection.
	if runs, err := f.engine(t, core.Options{}).unfinishedCopyRuns(ctx, f.spec); err != nil || len(runs) != 0 {
		t.Errorf("unfinished copies after the copy completed: %v, %v", runs, err)
	}
}

func TestCopy_AConsumerOnTheSourceDuringTheCopyReceivesEveryMessageOnce(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	const n = 3000
	f := newCopyFixture(t, ctx, "copycons", n, false)
	conn, err := f.srcAdmin.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rcv, err := conn.NewReceiver(ctx, artemis.FQQN(f.src, f.src), artemis.ReceiverOptions{Credit: 10})
	if err != nil {
		t.Fatal(err)
	}
	// The consumer takes a message every millisecond or so while the copy browses.
	consumed := make(chan []*amqp.Message, 1)
	consumerCtx, stopConsumer := context.WithCancel(ctx)
	defer stopConsumer()
	go func() {
		var got []*amqp.Message
		defer func() { consumed <- got }()
		for {
			msg, err := rcv.Receive(consumerCtx)
			if err != nil {
				return
			}
			if err := rcv.Accept(ctx, msg); err != nil {
				return
			}
			got = append(got, msg)
			if len(got) == n {
				return
			}
			_ = core.Sleep(consumerCtx, time.Millisecond)
		}
	}()
	res, err := f.engine(t, core.Options{BatchSize: 100}).Copy(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	// The consumer then takes the rest: every message once, the copy changed nothing of that.
	var got []*amqp.Message
	select {
	case got = <-consumed:
	case <-time.After(5 * time.Minute):
		t.Fatal("the consumer did not receive every message within 5 minutes")
	}
	transfertest.CheckSameSet(t, f.want, got)
	copied := transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt))
	seen := map[string]bool{}
	wanted := map[string]bool{}
	for _, id := range f.want {
		wanted[id] = true
	}
	for _, m := range copied {
		id := transfertest.MessageIDOf(m)
		if seen[id] || !wanted[id] {
			t.Fatalf("the copy holds %s twice or unselected", id)
		}
		seen[id] = true
	}
	if int64(len(copied)) != res.Relayed {
		t.Errorf("the target holds %d copies, the result says %d", len(copied), res.Relayed)
	}
	t.Logf("with a consumer on the source the copy holds %d of %d messages (those the browse passed before the consumer took them), no doubles; the consumer got all %d once",
		len(copied), n, len(got))
}

func TestCopy_SelectionsFilterIDsFrozenAtT0AndExpiryKept(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	env := testenv.Require(t)
	srcAdmin, tgtAdmin := testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	dsn := transfertest.LedgerDSN(t, env)
	l := testenv.OpenLedger(t, dsn)
	src := testenv.UniqueName("copysel.src")
	testenv.FixtureQueue(t, ctx, srcAdmin, src)
	// 100 messages: even n are red, a quarter of them carry an expiry (absolute, AMQP
	// creation-time plus ttl, or a Core message's).
	expiresAt := time.Now().Add(2 * time.Hour).Truncate(time.Millisecond)
	created := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	ids := make([]string, 100)
	transfertest.Produce(t, ctx, srcAdmin, src, 100, func(i int) *amqp.Message {
		ids[i] = fmt.Sprintf("sel-%d", i)
		color := "blue"
		if i%2 == 0 {
			color = "red"
		}
		msg := &amqp.Message{Header: &amqp.MessageHeader{Durable: true, Priority: uint8(i % 10)},
			Properties:            &amqp.MessageProperties{MessageID: ids[i], CreationTime: &created},
			ApplicationProperties: map[string]any{"color": color, "n": int64(i)}, Value: "body " + strconv.Itoa(i)}
		switch i % 8 {
		case 0:
			msg.Properties.AbsoluteExpiryTime = &expiresAt
		case 1:
			msg.Header.TTL = 3 * time.Hour
		}
		return msg
	})
	env.Produce(t, "source", "queue://"+src, 5, "--msgttl", "3600000", "--properties", `[{"type":"string","key":"color","value":"red"}]`)
	book := testBook{&transfertest.Book{Ledger: l}}
	engine := func() *Copier {
		return &Copier{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
			Options: core.Options{BatchSize: 30, CopyIdleTimeout: 3 * time.Second}, Bookkeeper: book}}
	}

	t.Run("filter, frozen at t0, expiry kept", func(t *testing.T) {
		tgt := testenv.UniqueName("copysel.f")
		testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
		spec := core.Spec{Mode: core.ModeCopy, Source: core.Endpoint{Broker: "source", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt},
			Selection: core.Selection{Filter: "color = 'red'"}}
		// A message produced after t0 is not part of the selection: it arrives once the
		// ledger has the run, before anything is copied.
		book.BeforeCreate = func(core.BookedRun) {
			time.Sleep(5 * time.Millisecond) // t0 is taken just before the run is recorded
			transfertest.Produce(t, ctx, srcAdmin, src, 1, func(int) *amqp.Message {
				now := time.Now()
				return &amqp.Message{Header: &amqp.MessageHeader{Durable: true}, Properties: &amqp.MessageProperties{MessageID: "after-t0", CreationTime: &now},
					ApplicationProperties: map[string]any{"color": "red"}, Value: "late"}
			})
		}
		defer func() { book.BeforeCreate = nil }()
		res, err := engine().Copy(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		got := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
		byID := map[string]*amqp.Message{}
		coreMessages := 0
		for _, m := range got {
			id := transfertest.MessageIDOf(m)
			if strings.HasPrefix(id, "ID:") {
				coreMessages++
				if m.Properties.AbsoluteExpiryTime == nil || time.Until(*m.Properties.AbsoluteExpiryTime) < 50*time.Minute {
					t.Errorf("Core message %s arrived with expiry %v, want its hour", id, m.Properties.AbsoluteExpiryTime)
				}
				continue
			}
			byID[id] = m
		}
		if len(byID) != 50 || coreMessages != 5 || int64(len(got)) != res.Relayed {
			t.Fatalf("the filter copy holds %d AMQP and %d Core messages (result %d), want the 50 red ones and the 5 Core ones; not after-t0", len(byID), coreMessages, res.Relayed)
		}
		for i := 0; i < 100; i += 2 {
			m := byID[ids[i]]
			if m == nil {
				t.Fatalf("red message %s was not copied", ids[i])
			}
			if m.Header.Priority != uint8(i%10) || m.Header.DeliveryCount != 0 || m.Value != "body "+strconv.Itoa(i) {
				t.Errorf("copy of %s: priority %d, delivery count %d, body %v", ids[i], m.Header.Priority, m.Header.DeliveryCount, m.Value)
			}
			var want int64
			switch i % 8 {
			case 0:
				want = expiresAt.UnixMilli()
			}
			if got := transfertest.AbsoluteExpiry(m); got != want {
				t.Errorf("copy of %s expires at %d, want %d", ids[i], got, want)
			}
		}
		// An AMQP message with a ttl only gets creation-time plus ttl (i%8 == 1 are odd, blue:
		// the id selection below checks them).
		checkCopyRun(t, ctx, l, res.RunID, 55)
	})

	t.Run("message ids, exact", func(t *testing.T) {
		tgt := testenv.UniqueName("copysel.i")
		testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
		picked := []string{ids[1], ids[9], ids[17], ids[50], "no-such-message"}
		spec := core.Spec{Mode: core.ModeCopy, Source: core.Endpoint{Broker: "source", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt},
			Selection: core.Selection{MessageIDs: picked}}
		res, err := engine().Copy(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		got := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
		transfertest.CheckSameSet(t, picked[:4], got)
		for _, m := range got {
			if id := transfertest.MessageIDOf(m); id == ids[1] || id == ids[9] || id == ids[17] {
				want := created.Add(3 * time.Hour).UnixMilli()
				if got := transfertest.AbsoluteExpiry(m); got != want {
					t.Errorf("copy of %s (ttl 3h, created %s) expires at %d, want creation-time plus ttl %d", id, created, got, want)
				}
			}
		}
		checkCopyRun(t, ctx, l, res.RunID, 4)
	})
	if d := transfertest.QueueDepth(t, ctx, srcAdmin, src); d != 106 {
		t.Errorf("the source holds %d messages after the copies, want 106", d)
	}
}

func TestCopy_WithoutALedgerIsRefused(t *testing.T) {
	e := &Copier{setup: &core.Setup{}}
	spec := transfertest.Spec()
	spec.Mode = core.ModeCopy
	if _, err := e.Copy(context.Background(), spec); !errors.Is(err, errCopyNeedsLedger) {
		t.Errorf("Copy without a ledger: %v, want errCopyNeedsLedger", err)
	}
	if _, err := e.resumeCopyByID(context.Background(), core.NewRunID(spec, time.Now()), spec, e.setup.Hooks); !errors.Is(err, errCopyNeedsLedger) {
		t.Errorf("ResumeCopy without a ledger: %v, want errCopyNeedsLedger", err)
	}
	if err := e.abandonCopy(context.Background(), core.NewRunID(spec, time.Now())); !errors.Is(err, errCopyNeedsLedger) {
		t.Errorf("AbandonCopy without a ledger: %v, want errCopyNeedsLedger", err)
	}
}

func TestCopy_FromA2_31SourceBrokerNeedsNoManagementCopy(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	env := testenv.Require(t)
	// Artemis 2.31 has no copyMessage; a copy needs none: it browses over AMQP.
	legacy, tgtAdmin := testenv.Client(t, env, "legacy", true), testenv.Client(t, env, "target", true)
	l := testenv.OpenLedger(t, transfertest.LedgerDSN(t, env))
	src, tgt := testenv.UniqueName("copylegacy.src"), testenv.UniqueName("copylegacy.tgt")
	testenv.FixtureQueue(t, ctx, legacy, src)
	testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
	want := transfertest.ProduceNumbered(t, ctx, legacy, src, "legacy", 500)
	before := sourceSnapshot(t, ctx, legacy, src)
	spec := core.Spec{Mode: core.ModeCopy, Source: core.Endpoint{Broker: "legacy", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt}}
	e := &Copier{setup: &core.Setup{Source: testenv.Client(t, env, "legacy", false), Target: testenv.Client(t, env, "target", false),
		Options: core.Options{BatchSize: 100, CopyIdleTimeout: 3 * time.Second}, Bookkeeper: testBook{&transfertest.Book{Ledger: l}}}}
	res, err := e.Copy(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
	checkSameSnapshot(t, before, sourceSnapshot(t, ctx, legacy, src))
	checkCopyRun(t, ctx, l, res.RunID, 500)
}

// An operator (or a dead-letter retry) moves a message the copy has already copied off the
// source queue and back during the copy: the broker re-adds it at the tail with _AMQ_ORIG_*
// properties. The copy meets it again and knows it for the message it copied.
func TestCopy_AMessageTheBrokerReAddsDuringTheCopyIsNotCopiedTwice(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	f := newCopyFixture(t, ctx, "copyreadd", 300, false)
	side := testenv.UniqueName("copyreadd.side")
	testenv.FixtureQueue(t, ctx, f.srcAdmin, side)
	// A filter selection ends by the browse's idle timeout, so the copy reads on past the
	// queue's depth to the re-added message at the tail.
	f.spec.Selection.Filter = "n >= 0"
	e := f.engine(t, core.Options{BatchSize: 50})
	sent := 0
	e.setup.Hooks.BeforeSend = func() {
		if sent++; sent != 200 {
			return
		}
		for _, mv := range []artemis.MoveRequest{{Queue: f.src, Filter: "n = 0", TargetQueue: side}, {Queue: side, TargetQueue: f.src}} {
			if n, err := f.srcAdmin.MoveMessages(ctx, mv); err != nil || n != 1 {
				t.Errorf("moving message n = 0 from %s to %s: %d moved, %v", mv.Queue, mv.TargetQueue, n, err)
			}
		}
	}
	res, err := e.Copy(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if sent < 200 {
		t.Fatalf("the copy sent %d messages, fewer than the 200 at which the message is moved", sent)
	}
	readded := transfertest.BrowseAll(t, ctx, f.srcAdmin, f.src)
	if len(readded) != 300 {
		t.Fatalf("the source holds %d messages after the moves, want 300", len(readded))
	}
	if last := readded[len(readded)-1]; transfertest.MessageIDOf(last) != f.want[0] {
		t.Fatalf("the source's last message is %s, want %s re-added at the tail", transfertest.MessageIDOf(last), f.want[0])
	}
	// What the broker changed: an AMQP message re-added by a move browses with its address in
	// to and the x-opt-ORIG-* annotations (a Core message with _AMQ_ORIG_* properties).
	if last := readded[len(readded)-1]; last.Properties == nil || last.Properties.To == nil || last.Annotations["x-opt-ORIG-QUEUE"] == nil {
		t.Fatalf("the re-added message browses as %+v with annotations %v: the broker no longer marks it as this test expects", last.Properties, last.Annotations)
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	checkCopyRun(t, ctx, f.ledger, res.RunID, 300)
}

// Messages without a message-id that differ only in their header's durability or priority, or
// in an annotation, are different messages to a consumer: each is copied. Under the identity
// that left those out, the target got one of them.
func TestCopy_MessagesThatDifferOnlyInDurabilityPriorityOrAnAnnotationAreEachCopied(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	f := newCopyFixture(t, ctx, "copytwins", 0, false)
	variants := []struct {
		durable     bool
		priority    uint8
		annotations amqp.Annotations
	}{
		{true, 4, nil}, {false, 4, nil}, {true, 7, nil}, {true, 4, amqp.Annotations{"x-opt-app": "b"}},
	}
	transfertest.Produce(t, ctx, f.srcAdmin, f.src, len(variants), func(i int) *amqp.Message {
		v := variants[i]
		return &amqp.Message{Header: &amqp.MessageHeader{Durable: v.durable, Priority: v.priority}, Annotations: v.annotations,
			ApplicationProperties: map[string]any{"kind": "twin"}, Value: "the same body"}
	})
	res, err := f.engine(t, core.Options{}).Copy(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	got := transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt))
	seen := map[string]int{}
	for _, m := range got {
		durable, priority := m.Header != nil && m.Header.Durable, uint8(4)
		if m.Header != nil {
			priority = m.Header.Priority
		}
		seen[fmt.Sprintf("durable=%v priority=%d app=%v", durable, priority, m.Annotations["x-opt-app"])]++
	}
	t.Logf("copied %d, indistinguishable %d; the target holds %v", res.Relayed, res.CopyIndistinguishable, seen)
	if len(got) != len(variants) || len(seen) != len(variants) || res.CopyIndistinguishable != 0 {
		t.Errorf("the target holds %d messages of %d kinds for %d distinct ones (%d counted indistinguishable)", len(got), len(seen), len(variants), res.CopyIndistinguishable)
	}
}

// The identity of a message is the same on every browse and after the broker moved it off the
// queue and back, for an AMQP, a Core (the broker's CLI) and a STOMP message: what the identity
// now hashes of the header and annotations is the producer's, not the broker's.
func TestMessageIdentity_OnARealBrokerIsTheSameOnEachBrowseAndAfterAMoveOffAndBack(t *testing.T) {
	ctx := transfertest.Ctx(t, 3*time.Minute)
	f := newCopyFixture(t, ctx, "identity.real", 0, false)
	side := testenv.UniqueName("identity.real.side")
	testenv.FixtureQueue(t, ctx, f.srcAdmin, side)
	transfertest.Produce(t, ctx, f.srcAdmin, f.src, 1, func(int) *amqp.Message {
		return &amqp.Message{Header: &amqp.MessageHeader{Durable: true, Priority: 2, TTL: time.Hour}, Annotations: amqp.Annotations{"x-opt-app": 1},
			ApplicationProperties: map[string]any{"fid": "amqp"}, Value: "x"}
	})
	f.env.Produce(t, "source", f.src, 1, "--properties", `[{"type":"string","key":"fid","value":"core-cli"}]`)
	transfertest.SendSTOMP(t, ctx, f.env, "source", f.src, []map[string]string{{"fid": "stomp", "priority": "8", "expires": "4102444800000"}})
	identities := func() map[string]int64 {
		out := map[string]int64{}
		for _, m := range transfertest.BrowseAll(t, ctx, f.srcAdmin, f.src) {
			out[fmt.Sprint(m.ApplicationProperties["fid"])] = messageIdentity(m)
		}
		if len(out) != 3 {
			t.Fatalf("browsed %v, want the three messages", out)
		}
		return out
	}
	first, second := identities(), identities()
	for _, mv := range []artemis.MoveRequest{{Queue: f.src, TargetQueue: side}, {Queue: side, TargetQueue: f.src}} {
		if n, err := f.srcAdmin.MoveMessages(ctx, mv); err != nil || n != 3 {
			t.Fatalf("moving from %s to %s: %d moved, %v", mv.Queue, mv.TargetQueue, n, err)
		}
	}
	readded := identities()
	for fid, id := range first {
		if second[fid] != id || readded[fid] != id {
			t.Errorf("message %s: identity %d on the first browse, %d on the second, %d after the move off and back", fid, id, second[fid], readded[fid])
		}
	}
}
