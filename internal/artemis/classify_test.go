package artemis_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// brokerVersions are the brokers whose refusals the client must recognise: the current Artemis
// and the oldest supported one.
var brokerVersions = []string{"source", "legacy"}

func TestReceiver_BeyondMaxConsumersIsErrMaxConsumers(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, brokerVersions, 30*time.Second, func(t *testing.T, ctx context.Context, broker string) {
		c := testenv.Client(t, env, broker, true)
		name := testenv.UniqueName("test.errors.maxconsumers")
		testenv.CreateQueue(t, ctx, c, artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: 1})
		conn := adminConnection(ctx, t, env, broker)
		first, err := conn.NewReceiver(ctx, artemis.FQQN(name, name), artemis.ReceiverOptions{})
		if err != nil {
			t.Fatalf("first receiver: %v", err)
		}
		defer first.Close(ctx)
		_, err = conn.NewReceiver(ctx, artemis.FQQN(name, name), artemis.ReceiverOptions{})
		if !errors.Is(err, artemis.ErrMaxConsumers) || errors.Is(err, artemis.ErrForbidden) || artemis.IsConnectionLost(err) {
			t.Fatalf("want ErrMaxConsumers alone for a second consumer, got %v", err)
		}
	})
}

// A malformed filter is an *artemis.FilterError (matching ErrInvalidFilter) wherever the broker
// parses it: management operations and AMQP attach alike.
func TestInvalidFilter_IsAFilterErrorFromManagementAndAttach(t *testing.T) {
	env := testenv.Require(t)
	const bad = "color IN ("
	onBrokers(t, brokerVersions, 30*time.Second, func(t *testing.T, ctx context.Context, broker string) {
		c := testenv.Client(t, env, broker, true)
		name := testenv.UniqueName("test.errors.filter")
		other := testenv.UniqueName("test.errors.filter.other")
		testenv.FixtureQueue(t, ctx, c, name)
		testenv.FixtureQueue(t, ctx, c, other)
		conn := adminConnection(ctx, t, env, broker)
		sendAll(ctx, t, conn, artemis.FQQN(name, name), 1)

		check := func(op string, err error, quotesFilter bool) {
			t.Helper()
			var fe *artemis.FilterError
			if !errors.As(err, &fe) || !errors.Is(err, artemis.ErrInvalidFilter) {
				t.Errorf("%s: want a *FilterError, got %v", op, err)
				return
			}
			if !strings.Contains(fe.Reason, "Invalid filter") || (quotesFilter && !strings.Contains(fe.Reason, bad)) {
				t.Errorf("%s: Reason %q does not give the broker's refusal", op, fe.Reason)
			}
		}
		_, err := c.CountMessages(ctx, name, bad)
		check("CountMessages", err, true)
		_, err = c.BrowseMessages(ctx, name, bad, 10)
		check("BrowseMessages", err, true)
		_, err = c.MoveMessages(ctx, artemis.MoveRequest{Queue: name, Filter: bad, TargetQueue: other})
		check("MoveMessages", err, true)
		_, err = conn.NewReceiver(ctx, artemis.FQQN(name, name), artemis.ReceiverOptions{Selector: bad})
		check("NewReceiver", err, false)
		_, err = conn.NewBrowser(ctx, artemis.FQQN(name, name), artemis.BrowserOptions{Selector: bad})
		check("NewBrowser", err, false)

		if n, err := c.CountMessages(ctx, name, ""); err != nil || n != 1 {
			t.Fatalf("the refused operations left %d messages (%v), want the 1 sent", n, err)
		}
	})
}
