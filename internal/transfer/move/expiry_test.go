package move

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// produceExpiring sends n durable messages with ids prefix-i; every other one carries an
// absolute expiry (hours ahead, a different one each), the rest none. It returns the expiry by
// id, 0 for none.
func produceExpiring(t *testing.T, ctx context.Context, c *artemis.Client, queue, prefix string, n int) map[string]int64 {
	t.Helper()
	want := make(map[string]int64, n)
	base := time.Now().Add(3 * time.Hour).Truncate(time.Millisecond)
	transfertest.Produce(t, ctx, c, queue, n, func(i int) *amqp.Message {
		id := prefix + "-" + strconv.Itoa(i)
		now := time.Now()
		msg := &amqp.Message{
			Header:     &amqp.MessageHeader{Durable: true},
			Properties: &amqp.MessageProperties{MessageID: id, CreationTime: &now},
			Data:       [][]byte{bytes.Repeat([]byte{'e'}, 300)},
		}
		want[id] = 0
		if i%2 == 0 {
			at := base.Add(time.Duration(i) * time.Second)
			msg.Properties.AbsoluteExpiryTime = &at
			want[id] = at.UnixMilli()
		}
		return msg
	})
	return want
}

// TestMove_KeepsExpiryAcrossWindowsPagingAndAResume moves 2,400 messages, half of them with an
// expiry, from a source queue whose address pages (most messages are on disk, where the
// broker's by-id operations cannot reach them), with an expiry window of 300 messages; the
// first run is cancelled in the middle of a window and a second run resumes it. Every message
// arrives once, each with exactly its source expiry or none.
func TestMove_KeepsExpiryAcrossWindowsPagingAndAResume(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 8*time.Minute)
	srcAdmin, tgtAdmin := testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	src, tgt := testenv.UniqueName("expiry.src"), testenv.UniqueName("expiry.tgt")
	// A small exact-match limit makes the source address page almost at once.
	if err := srcAdmin.AddAddressSettings(ctx, src, map[string]any{"addressFullMessagePolicy": "PAGE", "maxSizeBytes": int64(64 << 10), "pageSizeBytes": int64(32 << 10)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srcAdmin.RemoveAddressSettings(ctx, src)
	})
	testenv.FixtureQueue(t, ctx, srcAdmin, src)
	testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
	const n = 2400
	want := produceExpiring(t, ctx, srcAdmin, src, "exp", n)
	if usage, err := srcAdmin.AddressUsage(ctx, src); err != nil || !usage.Paging {
		t.Fatalf("the source address should page (usage %+v, %v)", usage, err)
	}

	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := core.Options{ExpiryWindow: 300, BatchSize: 100, ChunkSize: 500, Progress: func(p core.Progress) {
		if p.Relayed >= 450 { // inside the second window
			cancel()
		}
	}}
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false), Options: opts}}
	first, err := e.Move(runCtx, spec)
	if !errors.Is(err, core.ErrInterrupted) {
		t.Fatalf("the first run should be interrupted, got %v", err)
	}
	opts.Progress = nil
	e.setup.Options = opts
	second, err := e.Move(ctx, spec)
	if err != nil {
		returnStaged(t, e, second.RunID)
		t.Fatal(err)
	}
	if second.RunID != first.RunID || !second.Resumed {
		t.Errorf("the second run %s (resumed %v) should resume %s", second.RunID, second.Resumed, first.RunID)
	}
	t.Logf("first run relayed %d (kept %d expiries), second %d (kept %d, lost %d)",
		first.Relayed, first.ExpiryKept, second.Relayed, second.ExpiryKept, second.ExpiryLost)
	if lost := first.ExpiryLost + second.ExpiryLost; lost != 0 {
		t.Errorf("%d messages lost their expiry", lost)
	}
	if kept := first.ExpiryKept + second.ExpiryKept; kept < n/2 {
		t.Errorf("the runs kept %d expiries, want at least %d", kept, n/2)
	}

	got := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	ids := make([]string, 0, n)
	for id := range want {
		ids = append(ids, id)
	}
	transfertest.CheckSameSet(t, ids, got)
	wrong := 0
	for _, m := range got {
		id := transfertest.MessageIDOf(m)
		if exp := transfertest.AbsoluteExpiry(m); exp != want[id] {
			if wrong++; wrong <= 5 {
				t.Errorf("%s: absolute expiry %d on the target, %d on the source", id, exp, want[id])
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d messages arrived with another expiry", wrong, n)
	}
	if d := transfertest.QueueDepth(t, ctx, srcAdmin, src); d != 0 {
		t.Errorf("source still holds %d messages", d)
	}
	checkNoStaging(t, ctx, srcAdmin, first.RunID)
}
