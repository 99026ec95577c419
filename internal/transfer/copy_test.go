package transfer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// The test Bookkeeper records copies too.
var _ CopyLedger = (*testBook)(nil)

func (b *testBook) RecordCopied(ctx context.Context, runID, holder string, ids []int64) error {
	_, err := b.l.RecordCopied(ctx, runID, holder, ids)
	return err
}

func (b *testBook) CopiedAmong(ctx context.Context, runID string, ids []int64) (map[int64]bool, error) {
	return b.l.CopiedAmong(ctx, runID, ids)
}

func (b *testBook) UnfinishedCopies(ctx context.Context, specKey string) ([]CopyRun, error) {
	runs, err := b.l.UnfinishedCopies(ctx, specKey)
	if err != nil {
		return nil, err
	}
	return CopyRunsFromLedger(runs), nil
}

// copyFixture is a source queue of numbered messages, an empty target queue, a ledger of its
// own and a copy spec between them.
type copyFixture struct {
	env                *testenv.Env
	srcAdmin, tgtAdmin *artemis.Client
	src, tgt           string
	spec               Spec
	want               []string
	ledger             *ledger.Ledger
	dsn                string
}

// newCopyFixture makes a fixture of n messages; paged puts the source address in paging from
// its first megabyte, so that a copy walks paged messages.
func newCopyFixture(t *testing.T, ctx context.Context, name string, n int, paged bool) *copyFixture {
	t.Helper()
	env := testenv.Require(t)
	f := &copyFixture{env: env, srcAdmin: testClient(t, env, "source", true), tgtAdmin: testClient(t, env, "target", true)}
	f.dsn = testLedgerDSN(t, env)
	f.ledger = openTestLedger(t, f.dsn)
	f.src, f.tgt = testenv.UniqueName(name+".src"), testenv.UniqueName(name+".tgt")
	if paged {
		if err := f.srcAdmin.AddAddressSettings(ctx, f.src, map[string]any{"addressFullMessagePolicy": "PAGE",
			"maxSizeBytes": int64(1 << 20), "pageSizeBytes": int64(256 << 10)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.srcAdmin.RemoveAddressSettings(context.Background(), f.src) })
	}
	fixtureQueue(t, ctx, f.srcAdmin, f.src)
	fixtureQueue(t, ctx, f.tgtAdmin, f.tgt)
	if n > 0 {
		f.want = produceNumbered(t, ctx, f.srcAdmin, f.src, name, n)
	}
	f.spec = Spec{Mode: ModeCopy, Source: Endpoint{Broker: "source", Queue: f.src}, Target: Endpoint{Broker: "target", Queue: f.tgt}}
	return f
}

func (f *copyFixture) engine(t *testing.T, opts Options) *Engine {
	if opts.BatchSize == 0 {
		opts.BatchSize = 200
	}
	if opts.CopyIdleTimeout == 0 {
		opts.CopyIdleTimeout = 5 * time.Second
	}
	return &Engine{Source: testClient(t, f.env, "source", false), Target: testClient(t, f.env, "target", false),
		Options: opts, Bookkeeper: &testBook{l: f.ledger}}
}

// sourceSnapshot browses a queue in its order: each message's id and delivery count as the
// browse shows them (the AMQP header's delivery-count).
func sourceSnapshot(t *testing.T, ctx context.Context, c *artemis.Client, queue string) []string {
	t.Helper()
	var out []string
	for _, msg := range browseAll(t, ctx, c, queue) {
		dc := uint32(0)
		if msg.Header != nil {
			dc = msg.Header.DeliveryCount
		}
		out = append(out, fmt.Sprintf("%s/%d", messageIDOf(msg), dc))
	}
	return out
}

// checkSameSnapshot fails unless two snapshots hold the same messages in the same order with
// the same delivery counts.
func checkSameSnapshot(t *testing.T, before, after []string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("the source held %d messages before the copy and %d after", len(before), len(after))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("source message %d was %s before the copy and is %s after (id/delivery count)", i, before[i], after[i])
		}
	}
}

// checkCopyRun checks that a copy run is completed with copied messages recorded in the
// ledger, and that nobody holds its lease.
func checkCopyRun(t *testing.T, ctx context.Context, l *ledger.Ledger, runID string, copied int64) {
	t.Helper()
	run, err := l.GetRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != ledger.StatusCompleted || run.Mode != ledger.ModeCopy {
		t.Errorf("run %s is a %s run, status %s; want a completed copy", runID, run.Mode, run.Status)
	}
	if run.Counters.Relayed != copied {
		t.Errorf("run %s records %d copied, want %d", runID, run.Counters.Relayed, copied)
	}
	if run.Lease != nil {
		t.Errorf("lease of %s still held by %s after the run ended", runID, run.Lease.Holder)
	}
}

func TestCopy_10000MessagesTargetHoldsExactlyTheSelectionAndTheSourceIsUnchanged(t *testing.T) {
	ctx := testCtx(t, 15*time.Minute)
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
	res, err := f.engine(t, Options{BatchSize: 500, CopyIdleTimeout: idle, Progress: func(p Progress) { last.Store(p) }}).Copy(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took >= idle {
		t.Errorf("the copy took %s: it waited out the idle timeout instead of ending at the queue's count", took)
	}
	if p, _ := last.Load().(Progress); p.Moved != 10_000 || p.Selected != 10_000 {
		t.Errorf("the last progress report says %d of %d copied, want 10000 of 10000", p.Moved, p.Selected)
	}
	t.Logf("copied %d messages in %s (%.0f msg/s)", res.Relayed,
		time.Since(started).Round(time.Millisecond), float64(res.Relayed)/time.Since(started).Seconds())
	if res.Relayed != 10_000 || res.RelayedTotal != 10_000 || res.CopySkipped != 0 || res.CopyIndistinguishable != 0 {
		t.Errorf("result %+v, want 10000 copied, none skipped or indistinguishable", res)
	}
	checkSameSnapshot(t, before, sourceSnapshot(t, ctx, f.srcAdmin, f.src))
	if d := queueDepth(t, ctx, f.srcAdmin, f.src); d != 10_000 {
		t.Errorf("the source queue holds %d messages after the copy, want 10000", d)
	}
	checkSameSet(t, f.want, consumeAll(t, ctx, f.tgtAdmin, f.tgt+"::"+f.tgt))
	checkCopyRun(t, ctx, f.ledger, res.RunID, 10_000)
	// A copy applied again after it completed starts a new run: a new t0, a new selection.
	if runs, err := f.engine(t, Options{}).UnfinishedCopyRuns(ctx, f.spec); err != nil || len(runs) != 0 {
		t.Errorf("unfinished copies after the copy completed: %v, %v", runs, err)
	}
}

func TestCopy_AConsumerOnTheSourceDuringTheCopyReceivesEveryMessageOnce(t *testing.T) {
	ctx := testCtx(t, 10*time.Minute)
	const n = 3000
	f := newCopyFixture(t, ctx, "copycons", n, false)
	conn, err := f.srcAdmin.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rcv, err := conn.NewReceiver(ctx, f.src+"::"+f.src, artemis.ReceiverOptions{Credit: 10})
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
			_ = Sleep(consumerCtx, time.Millisecond)
		}
	}()
	res, err := f.engine(t, Options{BatchSize: 100}).Copy(ctx, f.spec)
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
	checkSameSet(t, f.want, got)
	copied := consumeAll(t, ctx, f.tgtAdmin, f.tgt+"::"+f.tgt)
	seen := map[string]bool{}
	wanted := map[string]bool{}
	for _, id := range f.want {
		wanted[id] = true
	}
	for _, m := range copied {
		id := messageIDOf(m)
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
	ctx := testCtx(t, 10*time.Minute)
	env := testenv.Require(t)
	srcAdmin, tgtAdmin := testClient(t, env, "source", true), testClient(t, env, "target", true)
	dsn := testLedgerDSN(t, env)
	l := openTestLedger(t, dsn)
	src := testenv.UniqueName("copysel.src")
	fixtureQueue(t, ctx, srcAdmin, src)
	// 100 messages: even n are red, a quarter of them carry an expiry (absolute, AMQP
	// creation-time plus ttl, or a Core message's).
	expiresAt := time.Now().Add(2 * time.Hour).Truncate(time.Millisecond)
	created := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	ids := make([]string, 100)
	produce(t, ctx, srcAdmin, src, 100, func(i int) *amqp.Message {
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
	book := &testBook{l: l}
	engine := func() *Engine {
		return &Engine{Source: testClient(t, env, "source", false), Target: testClient(t, env, "target", false),
			Options: Options{BatchSize: 30, CopyIdleTimeout: 3 * time.Second}, Bookkeeper: book}
	}

	t.Run("filter, frozen at t0, expiry kept", func(t *testing.T) {
		tgt := testenv.UniqueName("copysel.f")
		fixtureQueue(t, ctx, tgtAdmin, tgt)
		spec := Spec{Mode: ModeCopy, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt},
			Selection: Selection{Filter: "color = 'red'"}}
		// A message produced after t0 is not part of the selection: it arrives once the
		// ledger has the run, before anything is copied.
		book.beforeCreate = func(BookedRun) {
			time.Sleep(5 * time.Millisecond) // t0 is taken just before the run is recorded
			produce(t, ctx, srcAdmin, src, 1, func(int) *amqp.Message {
				now := time.Now()
				return &amqp.Message{Header: &amqp.MessageHeader{Durable: true}, Properties: &amqp.MessageProperties{MessageID: "after-t0", CreationTime: &now},
					ApplicationProperties: map[string]any{"color": "red"}, Value: "late"}
			})
		}
		defer func() { book.beforeCreate = nil }()
		res, err := engine().Copy(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		got := consumeAll(t, ctx, tgtAdmin, tgt+"::"+tgt)
		byID := map[string]*amqp.Message{}
		core := 0
		for _, m := range got {
			id := messageIDOf(m)
			if strings.HasPrefix(id, "ID:") {
				core++
				if m.Properties.AbsoluteExpiryTime == nil || time.Until(*m.Properties.AbsoluteExpiryTime) < 50*time.Minute {
					t.Errorf("Core message %s arrived with expiry %v, want its hour", id, m.Properties.AbsoluteExpiryTime)
				}
				continue
			}
			byID[id] = m
		}
		if len(byID) != 50 || core != 5 || int64(len(got)) != res.Relayed {
			t.Fatalf("the filter copy holds %d AMQP and %d Core messages (result %d), want the 50 red ones and the 5 Core ones; not after-t0", len(byID), core, res.Relayed)
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
			if got := absoluteExpiry(m); got != want {
				t.Errorf("copy of %s expires at %d, want %d", ids[i], got, want)
			}
		}
		// An AMQP message with a ttl only gets creation-time plus ttl (i%8 == 1 are odd, blue:
		// the id selection below checks them).
		checkCopyRun(t, ctx, l, res.RunID, 55)
	})

	t.Run("message ids, exact", func(t *testing.T) {
		tgt := testenv.UniqueName("copysel.i")
		fixtureQueue(t, ctx, tgtAdmin, tgt)
		picked := []string{ids[1], ids[9], ids[17], ids[50], "no-such-message"}
		spec := Spec{Mode: ModeCopy, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt},
			Selection: Selection{MessageIDs: picked}}
		res, err := engine().Copy(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		got := consumeAll(t, ctx, tgtAdmin, tgt+"::"+tgt)
		checkSameSet(t, picked[:4], got)
		for _, m := range got {
			if id := messageIDOf(m); id == ids[1] || id == ids[9] || id == ids[17] {
				want := created.Add(3 * time.Hour).UnixMilli()
				if got := absoluteExpiry(m); got != want {
					t.Errorf("copy of %s (ttl 3h, created %s) expires at %d, want creation-time plus ttl %d", id, created, got, want)
				}
			}
		}
		checkCopyRun(t, ctx, l, res.RunID, 4)
	})
	if d := queueDepth(t, ctx, srcAdmin, src); d != 106 {
		t.Errorf("the source holds %d messages after the copies, want 106", d)
	}
}

func TestCopy_WithoutALedgerIsRefused(t *testing.T) {
	e := &Engine{}
	spec := testSpec()
	spec.Mode = ModeCopy
	if _, err := e.Copy(context.Background(), spec); !errors.Is(err, ErrCopyNeedsLedger) {
		t.Errorf("Copy without a ledger: %v, want ErrCopyNeedsLedger", err)
	}
	if _, err := e.ResumeCopy(context.Background(), NewRunID(spec, time.Now()), spec); !errors.Is(err, ErrCopyNeedsLedger) {
		t.Errorf("ResumeCopy without a ledger: %v, want ErrCopyNeedsLedger", err)
	}
	if err := e.AbandonCopy(context.Background(), NewRunID(spec, time.Now())); !errors.Is(err, ErrCopyNeedsLedger) {
		t.Errorf("AbandonCopy without a ledger: %v, want ErrCopyNeedsLedger", err)
	}
}

func TestMove_RefusesACopySpecBeforeTouchingABroker(t *testing.T) {
	spec := testSpec()
	spec.Mode = ModeCopy
	if _, err := (&Engine{}).Move(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "a copy runs with Copy") {
		t.Errorf("Move of a copy spec: %v", err)
	}
	spec.Mode = ModeMove
	if _, err := (&Engine{Bookkeeper: &testBook{}}).Copy(context.Background(), spec); err == nil || !strings.Contains(err.Error(), `a copy runs a spec of mode "copy"`) {
		t.Errorf("Copy of a move spec: %v", err)
	}
}

func TestCopy_TwoProcessesOnTheSameRunOneRunsAndTheOtherIsRefusedNamingTheHolder(t *testing.T) {
	ctx := testCtx(t, 10*time.Minute)
	f := newCopyFixture(t, ctx, "copytwo", 2000, false)
	// The first process stops mid-copy; the run is then resumed by two processes at once.
	stopCtx, stop := context.WithCancel(ctx)
	sent := 0
	first := f.engine(t, Options{BatchSize: 100})
	first.Hooks.BeforeSend = func() {
		if sent++; sent == 700 {
			stop()
		}
	}
	stopped, err := first.Copy(stopCtx, f.spec)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("the stopped copy: %v, want ErrInterrupted", err)
	}
	// Each in a child process of its own, as two applies on two machines would be.
	var wg sync.WaitGroup
	outs := make([]copyChildResult, 2)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// The one that takes the lease holds it for 10 s before its first send, so the other
			// meets it held whatever the order they reach the ledger in.
			outs[i] = runCopyChild(t, copyPlan{Spec: f.spec, DSN: f.dsn, RunID: stopped.RunID, Batch: 50, Point: "none", Pause: 10 * time.Second})
		}(i)
	}
	wg.Wait()
	var ran, refused int
	for _, o := range outs {
		switch {
		case o.Err == "":
			ran++
		case strings.Contains(o.Err, "is being worked on by") && strings.Contains(o.Err, "since"):
			refused++
			t.Logf("refused: %s", o.Err)
		default:
			t.Errorf("a child failed otherwise: %s", o.Err)
		}
	}
	if ran != 1 || refused != 1 {
		t.Fatalf("%d children ran the copy and %d were refused, want one each", ran, refused)
	}
	checkSameSet(t, f.want, consumeAll(t, ctx, f.tgtAdmin, f.tgt+"::"+f.tgt))
	runs, err := f.ledger.ListRuns(ctx, ledger.RunFilter{SourceQueue: f.src})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v; want the one copy", runs, err)
	}
	checkCopyRun(t, ctx, f.ledger, runs[0].ID, 2000)
}

func TestAbandonCopy_EndsTheRunInTheLedgerAndANewCopyStartsAfresh(t *testing.T) {
	ctx := testCtx(t, 10*time.Minute)
	f := newCopyFixture(t, ctx, "copyabandon", 500, false)
	stopCtx, stop := context.WithCancel(ctx)
	sent := 0
	e := f.engine(t, Options{BatchSize: 50})
	e.Hooks.BeforeSend = func() {
		if sent++; sent == 120 {
			stop()
		}
	}
	res, err := e.Copy(stopCtx, f.spec)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("the stopped copy: %v, want ErrInterrupted", err)
	}
	e = f.engine(t, Options{BatchSize: 50})
	run, err := e.UnfinishedCopy(ctx, res.RunID)
	if err != nil || run.Status != string(ledger.StatusInterrupted) || run.Copied == 0 || run.Holder != "" {
		t.Fatalf("UnfinishedCopy = %+v, %v; want the interrupted run, some copied, no holder", run, err)
	}
	if err := e.AbandonCopy(ctx, res.RunID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.UnfinishedCopy(ctx, res.RunID); !errors.Is(err, ErrNoSuchRun) {
		t.Fatalf("UnfinishedCopy of an abandoned run: %v, want ErrNoSuchRun", err)
	}
	if _, err := e.ResumeCopy(ctx, res.RunID, f.spec); !errors.Is(err, ErrNoSuchRun) {
		t.Fatalf("ResumeCopy of an abandoned run: %v, want ErrNoSuchRun", err)
	}
	if err := e.AbandonCopy(ctx, res.RunID); err != nil {
		t.Fatalf("abandoning it again: %v, want nil", err)
	}
	if kinds := eventKinds(t, ctx, f.ledger, res.RunID); kinds[len(kinds)-1] != string(ledger.EventAbandoned) {
		t.Errorf("the run's events end with %v, want abandoned", kinds)
	}
	other := f.spec
	other.Selection.Filter = "n >= 0"
	if _, err := e.ResumeCopy(ctx, res.RunID, other); err == nil || !strings.Contains(err.Error(), "is not a copy of") {
		t.Errorf("ResumeCopy with another spec: %v", err)
	}
	next, err := e.Copy(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if next.RunID == res.RunID || next.Resumed || next.Relayed != 500 {
		t.Errorf("the copy after the abandoned one: %+v, want a new run copying all 500", next)
	}
	// The target holds what the abandoned run copied, and the new run's full copy.
	if d := queueDepth(t, ctx, f.tgtAdmin, f.tgt); d != 500+run.Copied {
		t.Errorf("target holds %d, want %d", d, 500+run.Copied)
	}
}

func TestPreflight_ACopyOnlyReadsTheSourceAndCountsMessagesWithoutAMessageID(t *testing.T) {
	ctx := testCtx(t, 5*time.Minute)
	f := newCopyFixture(t, ctx, "copyplan", 20, false)
	// 10 more without a message-id, 5 of them alike in everything a browse shows.
	produce(t, ctx, f.srcAdmin, f.src, 10, func(i int) *amqp.Message {
		body := "same"
		if i >= 5 {
			body = "body " + strconv.Itoa(i)
		}
		return &amqp.Message{Header: &amqp.MessageHeader{Durable: true}, Value: body}
	})
	viewer := func(broker string) *artemis.Client {
		b := f.env.Broker(t, broker)
		c, err := artemis.New(artemis.Config{Name: broker, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
			Username: f.env.ViewerUser, Password: f.env.ViewerPassword})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// A reviewer who may only read and browse plans a copy without a refusal: nothing on the
	// source needs more.
	e := &Engine{Source: viewer("source"), Target: viewer("target"), Bookkeeper: &testBook{l: f.ledger}}
	findings, err := e.PreflightWithoutWrites(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	var identity string
	for _, fd := range findings {
		if fd.Severity == preflight.Error {
			t.Errorf("refused: %s: %s", fd.Summary, fd.Detail)
		}
		if fd.Summary == summaryCopyIdentity {
			identity = fd.Detail
		}
	}
	if !strings.Contains(identity, "Of the first 30 selected messages") || !strings.Contains(identity, "10 carry no message-id and 4 are identical") {
		t.Errorf("the identity finding says %q, want 30 sampled, 10 without a message-id, 4 identical to another", identity)
	}
	// The full plan, with the transfer engine's user on the target, writes nothing on the source.
	queuesBefore, err := f.srcAdmin.ListQueues(ctx, StagingPrefix)
	if err != nil {
		t.Fatal(err)
	}
	findings, err = f.engine(t, Options{}).Preflight(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range findings {
		if fd.Severity == preflight.Error {
			t.Errorf("refused: %s: %s", fd.Summary, fd.Detail)
		}
	}
	if queuesAfter, err := f.srcAdmin.ListQueues(ctx, StagingPrefix); err != nil || len(queuesAfter) != len(queuesBefore) {
		t.Errorf("staging-prefixed queues on the source: %d before the plan, %d after (%v)", len(queuesBefore), len(queuesAfter), err)
	}
}

func TestCopy_FromA2_31SourceBrokerNeedsNoManagementCopy(t *testing.T) {
	ctx := testCtx(t, 10*time.Minute)
	env := testenv.Require(t)
	// Artemis 2.31 has no copyMessage; a copy needs none: it browses over AMQP.
	legacy, tgtAdmin := testClient(t, env, "legacy", true), testClient(t, env, "target", true)
	l := openTestLedger(t, testLedgerDSN(t, env))
	src, tgt := testenv.UniqueName("copylegacy.src"), testenv.UniqueName("copylegacy.tgt")
	fixtureQueue(t, ctx, legacy, src)
	fixtureQueue(t, ctx, tgtAdmin, tgt)
	want := produceNumbered(t, ctx, legacy, src, "legacy", 500)
	before := sourceSnapshot(t, ctx, legacy, src)
	spec := Spec{Mode: ModeCopy, Source: Endpoint{Broker: "legacy", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}}
	e := &Engine{Source: testClient(t, env, "legacy", false), Target: testClient(t, env, "target", false),
		Options: Options{BatchSize: 100, CopyIdleTimeout: 3 * time.Second}, Bookkeeper: &testBook{l: l}}
	res, err := e.Copy(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	checkSameSet(t, want, consumeAll(t, ctx, tgtAdmin, tgt+"::"+tgt))
	checkSameSnapshot(t, before, sourceSnapshot(t, ctx, legacy, src))
	checkCopyRun(t, ctx, l, res.RunID, 500)
}

func TestCopy_ALongMessageIDListIsBrowsedInSelectorsOfUpTo16KiB(t *testing.T) {
	ctx := testCtx(t, 10*time.Minute)
	f := newCopyFixture(t, ctx, "copyids", 60, false)
	// 3,000 ids, 40 of them on the queue, spread over the list: two selectors of about 16 KiB.
	ids := make([]string, 0, 3000)
	for i := 0; len(ids) < 3000; i++ {
		if i%75 == 0 && i/75 < 40 {
			ids = append(ids, f.want[i/75])
		} else {
			ids = append(ids, fmt.Sprintf("ID:absent-%032d", i))
		}
	}
	if n := len(copySelectors(Selection{MessageIDs: ids}, time.Now())); n < 2 {
		t.Fatalf("%d selectors, want the list split", n)
	}
	spec := f.spec
	spec.Selection.MessageIDs = ids
	res, err := f.engine(t, Options{BatchSize: 20, CopyIdleTimeout: 3 * time.Second}).Copy(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	checkSameSet(t, f.want[:40], consumeAll(t, ctx, f.tgtAdmin, f.tgt+"::"+f.tgt))
	checkCopyRun(t, ctx, f.ledger, res.RunID, 40)
}
