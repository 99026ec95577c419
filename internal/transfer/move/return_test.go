package move

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// TestReturn_RefusedWhileALiveRunStagesWithoutALedger: while a run stages a window of expiring
// messages (its relay not on the staging queue, which a return used to take as the only sign
// of life), a return of the same run is asked for. Without a ledger, the run's lease on the
// broker must refuse the return; the run then finishes, every message once.
func TestReturn_RefusedWhileALiveRunStagesWithoutALedger(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "return.fence")
	const messages = 400
	want := make([]string, messages)
	transfertest.Produce(t, ctx, srcAdmin, src, messages, func(i int) *amqp.Message {
		want[i] = fmt.Sprintf("f-%d", i)
		return &amqp.Message{Header: &amqp.MessageHeader{Durable: true, TTL: time.Hour},
			Properties: &amqp.MessageProperties{MessageID: want[i]}, Data: [][]byte{[]byte("expiring")}}
	})
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	setup := func() *core.Setup {
		return &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
			Options: core.Options{ChunkSize: 100, BatchSize: 50, ExpiryWindow: 100}}
	}
	// The run stops after staging its first window, before relaying it, until the return has
	// been tried.
	staged, tried := make(chan struct{}), make(chan struct{})
	var once sync.Once
	mover := &Mover{setup: setup()}
	mover.setup.Hooks.AfterStageChunk = func() {
		once.Do(func() {
			close(staged)
			<-tried
		})
	}
	type outcome struct {
		res core.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := mover.Move(ctx, spec)
		done <- outcome{res, err}
	}()
	select {
	case <-staged:
	case o := <-done:
		t.Fatalf("the run ended before staging: %+v %v", o.res, o.err)
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	returner := &Mover{setup: setup()}
	returner.setup.Graces = gracesBesideALiveRun
	runs, err := returner.unfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		close(tried)
		t.Fatalf("runs %+v %v", runs, err)
	}
	returnCtx, cancel := context.WithTimeout(ctx, time.Minute)
	_, returnErr := returner.Return(returnCtx, runs[0].RunID)
	cancel()
	close(tried)
	o := <-done
	if !errors.Is(returnErr, core.ErrRunBusy) {
		t.Errorf("a return during a live run: %v, want it refused as busy", returnErr)
	}
	if o.err != nil {
		t.Errorf("the run: %v", o.err)
	}
	onTarget := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	onSource := transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))
	t.Logf("%d on the target, %d on the source", len(onTarget), len(onSource))
	transfertest.CheckSameSet(t, want, append(onTarget, onSource...))
}
