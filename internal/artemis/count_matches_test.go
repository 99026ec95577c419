package artemis_test

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// TestCountMatches_CountsPastTheBrokersBrowsePageCap: 300 messages, numbered in an int
// property; the broker's filtered count stops at its browse page size of 200, CountMatches
// must not, on 2.40 and 2.31 alike.
func TestCountMatches_CountsPastTheBrokersBrowsePageCap(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"source", "legacy"}, 2*time.Minute, func(t *testing.T, ctx context.Context, broker string) {
		admin := testenv.Client(t, env, broker, true)
		queue := testenv.UniqueName("mgmt.count.matches")
		testenv.FixtureQueue(t, ctx, admin, queue)
		conn, err := admin.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		sendMessages(ctx, t, conn, artemis.FQQN(queue, queue), 300, func(i int) *amqp.Message {
			m := textMessage(i)
			m.ApplicationProperties = map[string]any{"n": int32(i)}
			return m
		})
		for _, tt := range []struct {
			filter string
			limit  int
			want   int
		}{
			{"n >= 250", 300, 50},  // all beyond the first 200
			{"n >= 250", 50, 50},   // exactly the limit
			{"n >= 250", 20, 20},   // bounded by the limit
			{"n < 0", 100, 0},      // none
			{"n = 299", 1, 1},      // the last one alone
			{"n >= 100", 500, 200}, // more asked than exist
			{"", 1000, 300},        // no filter
		} {
			got, err := admin.CountMatches(ctx, queue, tt.filter, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("CountMatches(%q, %d) = %d, want %d", tt.filter, tt.limit, got, tt.want)
			}
		}
		if n, err := admin.CountMessages(ctx, queue, "n >= 250"); err == nil {
			t.Logf("the broker's own filtered count, capped at its browse page size: %d", n)
		}
	})
}
