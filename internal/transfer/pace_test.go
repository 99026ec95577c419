package transfer

import (
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// A capped move of 3,000 messages at 500 a second, on the real brokers: the relay's sends keep to
// the token bucket (no second holds more than the cap and its burst), the target's consumer sees
// no burst either, and the rate is within 10% of the cap.
//
// Machine speed: the cap is far below what the two brokers relay here uncapped (thousands a
// second), so a slow machine cannot push the rate over the cap; the upper bounds are strict.
// The rate is measured over the relay once staging is complete: before that the relay can only
// go as fast as the broker stages, which on a loaded machine is slower than the cap and says
// nothing about the pace. A machine too busy to relay at the cap even then fails the test with
// a message that says so (and names the longest pause between two sends), rather than passing
// a run that never showed the cap being reached.
func TestMove_CapOf500MessagesPerSecondHoldsTheRateTheTargetSees(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const messages, limit = 3000, 500.0
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "move.capped")
	env.Produce(t, "source", "queue://"+src, messages)
	want := transfertest.BrowseIDs(t, ctx, srcAdmin, src)
	if len(want) != messages {
		t.Fatalf("browsed %d source messages", len(want))
	}

	// The target's consumer takes each message as it arrives and notes when.
	arrivals := make(chan transfertest.Arrival, messages)
	consumed := make(chan error, 1)
	go func() {
		consumed <- transfertest.ConsumeTimed(ctx, tgtAdmin, artemis.FQQN(tgt, tgt), messages, arrivals)
	}()

	var mu sync.Mutex
	var sends []time.Time
	var staged time.Time // when staging was complete, as the first exact selection size says
	var reports []Progress
	e := &Engine{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Hooks: Hooks{BeforeSend: func() {
			mu.Lock()
			sends = append(sends, time.Now())
			mu.Unlock()
		}},
		Options: Options{MaxMessagesPerSecond: limit, Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.SelectedKind == core.CountExact && staged.IsZero() {
				staged = time.Now()
			}
			reports = append(reports, p)
		}}}
	res, err := e.Run(ctx, Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-consumed; err != nil {
		t.Fatal(err)
	}
	close(arrivals)
	var got []*amqp.Message
	var at []time.Time
	for a := range arrivals {
		got, at = append(got, a.Msg), append(at, a.At)
	}
	transfertest.CheckSameSet(t, want, got)
	if res.Relayed != messages || res.Resent != 0 {
		t.Errorf("result %+v", res)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range reports {
		if p.Phase == core.PhaseRelaying && p.Rate > 0 && p.Moved%1000 < 250 {
			t.Logf("progress: %s %d/%d moved, %.0f msg/s, ETA %s", p.Phase, p.Moved, p.Selected, p.Rate, p.ETA)
		}
	}
	burst := limit * core.PacerBurst
	all := transfertest.Measure(sends, time.Time{})
	afterStaging := transfertest.Measure(sends, staged)
	arrived := transfertest.Measure(at, time.Time{})
	t.Logf("sends: %s; once staging was complete: %s", all, afterStaging)
	t.Logf("arrivals at the target's consumer: %s", arrived)
	if staged.IsZero() || afterStaging.N < messages/3 {
		t.Fatalf("staging was complete only %d sends before the end; the pace cannot be judged from so few", afterStaging.N)
	}
	// The token bucket lets at most the cap and its burst leave in any second.
	if float64(all.Peak1s) > limit+burst+1 {
		t.Errorf("%d messages were sent within one second; the cap of %.0f allows %.0f", all.Peak1s, limit, limit+burst)
	}
	if float64(all.Peak3s) > 3*limit+burst+1 {
		t.Errorf("%d messages were sent within three seconds; the cap of %.0f allows %.0f", all.Peak3s, limit, 3*limit+burst)
	}
	// The consumer's own clock adds jitter (a pause of the target broker or of the consumer
	// bunches what arrived meanwhile), so it is held to the cap over two seconds, with a margin;
	// a relay without the cap delivers several times the cap here.
	if float64(arrived.Peak2s) > 1.25*2*limit {
		t.Errorf("the target's consumer got %d messages within two seconds; the cap is %.0f a second", arrived.Peak2s, limit)
	}
	// Over the whole relay, no more than the bucket allows: the cap times the time, plus the
	// burst it starts with.
	if allowed := limit*all.Span.Seconds() + burst + 1; float64(all.N) > allowed {
		t.Errorf("%d messages were sent in %s; the cap of %.0f allows %.0f", all.N, all.Span, limit, allowed)
	}
	if afterStaging.Rate > 1.1*limit || arrived.Rate > 1.1*limit {
		t.Errorf("the relay sent %.1f and the target's consumer got %.1f messages a second: more than 10%% over the cap of %.0f",
			afterStaging.Rate, arrived.Rate, limit)
	}
	if afterStaging.Rate < 0.9*limit {
		t.Errorf("once staging was complete the relay sent %.1f messages a second, more than 10%% under the cap of %.0f: this machine "+
			"did not relay as fast as the cap during this run (longest pause between two sends %s, against a burst of %.0f ms); the pace cannot be judged from it",
			afterStaging.Rate, limit, afterStaging.Longest.Round(time.Millisecond), 1000*core.PacerBurst)
	}
}
