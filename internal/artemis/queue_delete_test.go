package artemis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// declaredQueue declares an enabled anycast queue of its own address with filter.
func declaredQueue(ctx context.Context, t *testing.T, c *artemis.Client, prefix, filter string) string {
	t.Helper()
	name := testenv.UniqueName("test.delete." + prefix)
	if err := c.DeclareQueue(ctx, artemis.QueueDefinition{Name: name, Address: name, RoutingType: "ANYCAST", Durable: true,
		Filter: filter, MaxConsumers: -1, RingSize: -1, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return name
}

// expectKept checks that the queue is still there, enabled, with its filter, holding depth
// messages.
func expectKept(ctx context.Context, t *testing.T, c *artemis.Client, name, filter string, depth int64) {
	t.Helper()
	q, err := c.Queue(ctx, name)
	if err != nil {
		t.Fatalf("the queue is gone: %v", err)
	}
	if !q.Enabled || q.Filter != filter || q.MessageCount != depth {
		t.Fatalf("queue kept with enabled=%t filter=%q and %d messages, want enabled, filter %q and %d messages",
			q.Enabled, q.Filter, q.MessageCount, filter, depth)
	}
}

func TestDeleteEmptyQueue_KeepsAMessageStoredAfterItsFirstCount(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"target", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, broker string) {
		c := testenv.Client(t, env, broker, true)
		conn := adminConnection(ctx, t, env, broker)
		const filter = "color IS NULL"
		name := declaredQueue(ctx, t, c, "late", filter)
		err := c.DeleteEmptyQueue(ctx, name, artemis.DeleteEmptyQueueHooks{
			// A producer's link that comes and goes between the first count and the blocking.
			BeforeStop: func() { sendAll(ctx, t, conn, name, 1) },
		})
		var inUse *artemis.QueueInUseError
		if !errors.As(err, &inUse) || inUse.Stored.Counted != 1 || inUse.Producers != 0 {
			t.Fatalf("DeleteEmptyQueue = %v, want a refusal counting 1 message", err)
		}
		expectKept(ctx, t, c, name, filter, 1)
	})
}

func TestDeleteEmptyQueue_BlocksTheAddressBeforeItsLastCheckAndDeletesItEmptyThenUnblocksIt(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"target", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, broker string) {
		c := testenv.Client(t, env, broker, true)
		conn := adminConnection(ctx, t, env, broker)
		name := declaredQueue(ctx, t, c, "idle", "")
		// A second queue on the address shows whether its producers are blocked afterwards.
		other := name + ".other"
		if err := c.DeclareQueue(ctx, artemis.QueueDefinition{Name: other, Address: name, RoutingType: "ANYCAST", Durable: true,
			MaxConsumers: -1, RingSize: -1, Enabled: true}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.DestroyQueue(context.Background(), other) })
		err := c.DeleteEmptyQueue(ctx, name, artemis.DeleteEmptyQueueHooks{
			BeforeCheck: func() {
				// Stopped by blocking its producers, not by disabling it: a message already on
				// its way is stored, never dropped.
				q, err := c.Queue(ctx, name)
				if err != nil || !q.Enabled {
					t.Errorf("at the last check the queue reads enabled=%t (%v), want enabled", q.Enabled, err)
				}
			},
		})
		if err != nil {
			t.Fatalf("DeleteEmptyQueue of an empty idle queue: %v", err)
		}
		if _, err := c.Queue(ctx, name); !errors.Is(err, artemis.ErrNotFound) {
			t.Fatalf("the queue is still there: %v", err)
		}
		sendCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		sendAll(sendCtx, t, conn, artemis.FQQN(name, other), 1) // fails if the address stayed blocked
		if n, err := c.QueueDepth(ctx, other); err != nil || n != 1 {
			t.Fatalf("the address's other queue holds %d messages (%v), want the 1 sent after the delete", n, err)
		}
	})
}

func TestDeleteEmptyQueue_RefusesWhileAProducerIsAttached(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"target", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, broker string) {
		c := testenv.Client(t, env, broker, true)
		conn := adminConnection(ctx, t, env, broker)
		for _, target := range []string{"address", "fqqn"} {
			name := declaredQueue(ctx, t, c, "producer."+target, "")
			dest := name
			if target == "fqqn" {
				dest = artemis.FQQN(name, name)
			}
			s, err := conn.NewSender(ctx, dest, artemis.SenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = c.DeleteEmptyQueue(ctx, name, artemis.DeleteEmptyQueueHooks{})
			var inUse *artemis.QueueInUseError
			if !errors.As(err, &inUse) || inUse.Producers != 1 || !inUse.Stored.Empty() {
				t.Fatalf("DeleteEmptyQueue with a producer on the %s = %v, want a refusal naming 1 producer", target, err)
			}
			_ = s.Close(ctx)
			expectKept(ctx, t, c, name, "", 0)
		}
	})
}

// A producer that attaches to the queue's address during the delete's checks and sends one
// message either has it refused or finds it kept: a message the broker accepted is never
// deleted with the queue, nor dropped unrouted because the delete had stopped the queue.
func TestDeleteEmptyQueue_LosesNoMessageAProducerSendsDuringItsChecks(t *testing.T) {
	env := testenv.Require(t)
	points := map[string]func(artemis.DeleteEmptyQueueHooks, func()) artemis.DeleteEmptyQueueHooks{
		"before-stop": func(h artemis.DeleteEmptyQueueHooks, f func()) artemis.DeleteEmptyQueueHooks {
			h.BeforeStop = f
			return h
		},
		"before-check": func(h artemis.DeleteEmptyQueueHooks, f func()) artemis.DeleteEmptyQueueHooks {
			h.BeforeCheck = f
			return h
		},
	}
	for point, at := range points {
		t.Run(point, func(t *testing.T) {
			onBrokers(t, []string{"target", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, broker string) {
				c := testenv.Client(t, env, broker, true)
				conn := adminConnection(ctx, t, env, broker)
				name := declaredQueue(ctx, t, c, "racing", "")
				outcome := make(chan error, 1)
				// The producer attaches and sends at that point; the delete goes on once the
				// broker accepted the message, or after a while when the broker holds it back.
				producer := func() {
					go func() {
						s, err := conn.NewSender(ctx, name, artemis.SenderOptions{})
						if err == nil {
							var p *artemis.PendingSend
							if p, err = s.Send(ctx, textMessage(0)); err == nil {
								err = p.Wait(ctx)
							}
							_ = s.Close(context.WithoutCancel(ctx))
						}
						outcome <- err
					}()
					select {
					case err := <-outcome:
						outcome <- err
					case <-time.After(2 * time.Second):
					}
				}
				delErr := c.DeleteEmptyQueue(ctx, name, at(artemis.DeleteEmptyQueueHooks{}, producer))
				var sendErr error
				select {
				case sendErr = <-outcome:
				case <-time.After(30 * time.Second):
					t.Fatalf("the producer's send has no outcome 30 s after the delete returned (%v)", delErr)
				}
				t.Logf("delete: %v; send: %v", delErr, sendErr)
				if sendErr != nil {
					return // refused: the producer knows its message was not taken
				}
				var inUse *artemis.QueueInUseError
				if !errors.As(delErr, &inUse) {
					t.Fatalf("the broker accepted the producer's message and the delete returned %v, want a refusal", delErr)
				}
				expectKept(ctx, t, c, name, "", 1)
			})
		})
	}
}
