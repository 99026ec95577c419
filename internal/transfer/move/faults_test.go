package move

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// restartDuringRelay kills a broker with SIGKILL once the relay has confirmed `after` messages,
// and starts it again a moment later, while the run goes on.
func restartDuringRelay(t *testing.T, broker string) {
	env := testenv.RequireOwned(t)
	ctx := transfertest.Ctx(t, 6*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "restart")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "restart-"+broker, 3000)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	// Whatever happens, the broker must be up again for the tests after this one.
	t.Cleanup(func() { _ = env.StartBroker(broker) })

	var confirmed atomic.Int64
	var restarted sync.WaitGroup
	var waits []string
	var mu sync.Mutex
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Options: core.Options{BatchSize: 100, Progress: func(p core.Progress) {
			if p.Waiting != "" {
				mu.Lock()
				waits = append(waits, p.Waiting)
				mu.Unlock()
			}
		}}}}
	res, err := e.move(ctx, spec, core.Hooks{AfterConfirm: func() {
		if confirmed.Add(1) != 1000 {
			return
		}
		if err := env.KillBroker(broker); err != nil {
			t.Errorf("killing %s: %v", broker, err)
			return
		}
		restarted.Add(1)
		go func() {
			defer restarted.Done()
			time.Sleep(2 * time.Second)
			if err := env.StartBroker(broker); err != nil {
				t.Errorf("restarting %s: %v", broker, err)
			}
		}()
	}})
	restarted.Wait()
	if err != nil {
		t.Fatalf("the run did not survive the restart of %s: %v", broker, err)
	}
	mu.Lock()
	reconnected := false
	for _, w := range waits {
		reconnected = reconnected || strings.Contains(w, "reconnecting")
	}
	mu.Unlock()
	if !reconnected {
		t.Errorf("the run never reported waiting to reconnect: %q", waits)
	}
	transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
	// Messages whose acknowledgement the restart lost are sent again and dropped by the target;
	// they are reported apart, never counted twice.
	t.Logf("relayed %d, resent %d", res.RelayedTotal, res.Resent)
	if res.Relayed != int64(len(want)) || res.RelayedTotal != int64(len(want)) {
		t.Errorf("the run counts %d relayed (%d in all), want %d", res.Relayed, res.RelayedTotal, len(want))
	}
}

func TestMove_SourceBrokerKilledAndRestartedMidRelay(t *testing.T) { restartDuringRelay(t, "source") }

func TestMove_TargetBrokerKilledAndRestartedMidRelay(t *testing.T) { restartDuringRelay(t, "target") }

// fullTarget makes the target queue's address small with the given full-policy, runs a move of
// more than fits, and only after the run has reported waiting starts draining the target.
func fullTarget(t *testing.T, policy string) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "full")
	if err := tgtAdmin.AddAddressSettings(ctx, tgt, map[string]any{"addressFullMessagePolicy": policy, "maxSizeBytes": int64(64 * 1024), "pageSizeBytes": 16 * 1024}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tgtAdmin.RemoveAddressSettings(context.Background(), tgt) })
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "full-"+policy, 1000)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)

	waiting := make(chan string, 1)
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Options: core.Options{BatchSize: 50, Progress: func(p core.Progress) {
			if strings.Contains(p.Waiting, "full") || strings.Contains(p.Waiting, "refused") {
				select {
				case waiting <- p.Waiting:
				default:
				}
			}
		}}}}
	done := make(chan error, 1)
	var res core.Result
	go func() {
		var err error
		res, err = e.Move(ctx, spec)
		done <- err
	}()
	var reason string
	select {
	case reason = <-waiting:
		t.Logf("the run waits: %s", reason)
	case err := <-done:
		t.Fatalf("the run ended without waiting for the full target: %v", err)
	case <-ctx.Done():
		t.Fatal("the run never reported waiting")
	}
	// The run must hold still while the target is full: nothing fails meanwhile.
	select {
	case err := <-done:
		t.Fatalf("the run ended while the target was full: %v", err)
	case <-time.After(3 * time.Second):
	}
	got := drainWhile(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt), done)
	if err := <-done; err != nil {
		t.Fatalf("the run failed instead of waiting: %v", err)
	}
	got = append(got, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))...)
	transfertest.CheckSameSet(t, want, got)
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
}

// drainWhile consumes a queue slowly until the run ends.
func drainWhile(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string, done chan error) []*amqp.Message {
	t.Helper()
	r, closeConsumer := transfertest.Consumer(t, ctx, c, fqqn, 10)
	defer closeConsumer()
	var out []*amqp.Message
	for i := 0; i < 100_000; i++ {
		select {
		case err := <-done:
			done <- err // for the caller
			return out
		default:
		}
		waitCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		msg, err := r.Receive(waitCtx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := r.Accept(ctx, msg); err != nil {
			t.Fatal(err)
		}
		out = append(out, msg)
	}
	return out
}

func TestMove_WaitsForABlockPolicyTargetToFreeSpace(t *testing.T) { fullTarget(t, "BLOCK") }

func TestMove_WaitsForAFailPolicyTargetToFreeSpace(t *testing.T) { fullTarget(t, "FAIL") }
