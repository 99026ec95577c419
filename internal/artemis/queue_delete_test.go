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
			// A producer's link that comes and goes between the first count and the disabling.
			BeforeStop: func() { sendAll(ctx, t, conn, name, 1) },
		})
		var inUse *artemis.QueueInUseError
		if !errors.As(err, &inUse) || inUse.Stored.Counted != 1 || inUse.Producers != 0 {
			t.Fatalf("DeleteEmptyQueue = %v, want a refusal counting 1 message", err)
		}
		expectKept(ctx, t, c, name, filter, 1)
	})
}

func TestDeleteEmptyQueue_DisablesTheQueueBeforeItsLastCheckAndDeletesItEmpty(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"target", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, broker string) {
		c := testenv.Client(t, env, broker, true)
		name := declaredQueue(ctx, t, c, "idle", "")
		err := c.DeleteEmptyQueue(ctx, name, artemis.DeleteEmptyQueueHooks{
			BeforeCheck: func() {
				q, err := c.Queue(ctx, name)
				if err != nil || q.Enabled {
					t.Errorf("at the last check the queue reads enabled=%t (%v), want disabled", q.Enabled, err)
				}
			},
		})
		if err != nil {
			t.Fatalf("DeleteEmptyQueue of an empty idle queue: %v", err)
		}
		if _, err := c.Queue(ctx, name); !errors.Is(err, artemis.ErrNotFound) {
			t.Fatalf("the queue is still there: %v", err)
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
