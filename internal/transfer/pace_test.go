package transfer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
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
	ctx := testCtx(t, 5*time.Minute)
	const messages, limit = 3000, 500.0
	srcAdmin, tgtAdmin := testClient(t, env, "source", true), testClient(t, env, "target", true)
	src, tgt := testenv.UniqueName("move.capped.src"), testenv.UniqueName("move.capped.tgt")
	fixtureQueue(t, ctx, srcAdmin, src)
	fixtureQueue(t, ctx, tgtAdmin, tgt)
	env.Produce(t, "source", "queue://"+src, messages)
	want := browseIDs(t, ctx, srcAdmin, src)
	if len(want) != messages {
		t.Fatalf("browsed %d source messages", len(want))
	}

	// The target's consumer takes each message as it arrives and notes when.
	arrivals := make(chan arrival, messages)
	consumed := make(chan error, 1)
	go func() { consumed <- consumeTimed(ctx, tgtAdmin, tgt+"::"+tgt, messages, arrivals) }()

	var mu sync.Mutex
	var sends []time.Time
	var staged time.Time // when staging was complete, as the first exact selection size says
	var reports []Progress
	e := &Engine{Source: testClient(t, env, "source", false), Target: testClient(t, env, "target", false),
		Options: Options{MaxMessagesPerSecond: limit, Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.SelectedKind == CountExact && staged.IsZero() {
				staged = time.Now()
			}
			reports = append(reports, p)
		}}}
	res, err := e.move(ctx, Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}},
		Hooks{BeforeSend: func() {
			mu.Lock()
			sends = append(sends, time.Now())
			mu.Unlock()
		}})
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
		got, at = append(got, a.msg), append(at, a.at)
	}
	checkSameSet(t, want, got)
	if res.Relayed != messages || res.Resent != 0 {
		t.Errorf("result %+v", res)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range reports {
		if p.Phase == PhaseRelaying && p.Rate > 0 && p.Moved%1000 < 250 {
			t.Logf("progress: %s %d/%d moved, %.0f msg/s, ETA %s", p.Phase, p.Moved, p.Selected, p.Rate, p.ETA)
		}
	}
	burst := limit * pacerBurst
	all := measure(sends, time.Time{})
	afterStaging := measure(sends, staged)
	arrived := measure(at, time.Time{})
	t.Logf("sends: %s; once staging was complete: %s", all, afterStaging)
	t.Logf("arrivals at the target's consumer: %s", arrived)
	if staged.IsZero() || afterStaging.n < messages/3 {
		t.Fatalf("staging was complete only %d sends before the end; the pace cannot be judged from so few", afterStaging.n)
	}
	// The token bucket lets at most the cap and its burst leave in any second.
	if float64(all.peak1s) > limit+burst+1 {
		t.Errorf("%d messages were sent within one second; the cap of %.0f allows %.0f", all.peak1s, limit, limit+burst)
	}
	if float64(all.peak3s) > 3*limit+burst+1 {
		t.Errorf("%d messages were sent within three seconds; the cap of %.0f allows %.0f", all.peak3s, limit, 3*limit+burst)
	}
	// The consumer's own clock adds jitter (a pause of the target broker or of the consumer
	// bunches what arrived meanwhile), so it is held to the cap over two seconds, with a margin;
	// a relay without the cap delivers several times the cap here.
	if float64(arrived.peak2s) > 1.25*2*limit {
		t.Errorf("the target's consumer got %d messages within two seconds; the cap is %.0f a second", arrived.peak2s, limit)
	}
	// Over the whole relay, no more than the bucket allows: the cap times the time, plus the
	// burst it starts with.
	if allowed := limit*all.span.Seconds() + burst + 1; float64(all.n) > allowed {
		t.Errorf("%d messages were sent in %s; the cap of %.0f allows %.0f", all.n, all.span, limit, allowed)
	}
	if afterStaging.rate > 1.1*limit || arrived.rate > 1.1*limit {
		t.Errorf("the relay sent %.1f and the target's consumer got %.1f messages a second: more than 10%% over the cap of %.0f",
			afterStaging.rate, arrived.rate, limit)
	}
	if afterStaging.rate < 0.9*limit {
		t.Errorf("once staging was complete the relay sent %.1f messages a second, more than 10%% under the cap of %.0f: this machine "+
			"did not relay as fast as the cap during this run (longest pause between two sends %s, against a burst of %.0f ms); the pace cannot be judged from it",
			afterStaging.rate, limit, afterStaging.longest.Round(time.Millisecond), 1000*pacerBurst)
	}
}

// paceMeasure is what a series of event times shows of their pace.
type paceMeasure struct {
	n                      int
	span                   time.Duration // from the first event to the last
	rate                   float64       // events a second between the first and the last
	peak1s, peak2s, peak3s int           // the most events within any one, two and three seconds
	longest                time.Duration
}

func (m paceMeasure) String() string {
	return fmt.Sprintf("%d at %.1f/s (busiest 1 s: %d, 2 s: %d, 3 s: %d; longest pause %s)", m.n, m.rate, m.peak1s, m.peak2s, m.peak3s,
		m.longest.Round(time.Millisecond))
}

// measure measures the events at or after from.
func measure(events []time.Time, from time.Time) paceMeasure {
	var ts []time.Time
	for _, e := range events {
		if !e.Before(from) {
			ts = append(ts, e)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	m := paceMeasure{n: len(ts)}
	if len(ts) < 2 {
		return m
	}
	m.span = ts[len(ts)-1].Sub(ts[0])
	m.rate = float64(len(ts)-1) / m.span.Seconds()
	peak := func(window time.Duration) int {
		most := 0
		for i, j := 0, 0; i < len(ts); i++ {
			for j < len(ts) && ts[j].Sub(ts[i]) < window {
				j++
			}
			most = max(most, j-i)
		}
		return most
	}
	m.peak1s, m.peak2s, m.peak3s = peak(time.Second), peak(2*time.Second), peak(3*time.Second)
	for i := 1; i < len(ts); i++ {
		m.longest = max(m.longest, ts[i].Sub(ts[i-1]))
	}
	return m
}

type arrival struct {
	msg *amqp.Message
	at  time.Time
}

// consumeTimed takes n messages from fqqn as they arrive and sends each, with the time it
// arrived, to out.
func consumeTimed(ctx context.Context, c *artemis.Client, fqqn string, n int, out chan<- arrival) error {
	conn, err := c.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	r, err := conn.NewReceiver(ctx, fqqn, artemis.ReceiverOptions{Credit: 200})
	if err != nil {
		return err
	}
	defer r.Close(ctx)
	for i := 0; i < n; i++ {
		waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
		msg, err := r.Receive(waitCtx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("the target's consumer got %d of %d messages, then nothing for a minute", i, n)
		}
		if err != nil {
			return err
		}
		out <- arrival{msg, time.Now()}
		if err := r.Accept(ctx, msg); err != nil {
			return err
		}
	}
	return nil
}

// A copy keeps to the cap too: its sends pass the same pacer. Only the upper bounds are asserted
// here: a copy's pace is also bounded by the AMQP browse of the source, so a rate under the cap
// says nothing about the pacer (the move above shows the cap being reached).
func TestCopy_KeepsToMaxMessagesPerSecond(t *testing.T) {
	ctx := testCtx(t, 5*time.Minute)
	const messages, limit = 1500, 500.0
	f := newCopyFixture(t, ctx, "copy.capped", messages, false)
	var mu sync.Mutex
	var sends []time.Time
	e := f.engine(t, Options{MaxMessagesPerSecond: limit})
	// As the admin user: this test is about the pace, and an environment started before the
	// transfer user could browse any queue (testenv.sh) still runs it.
	e.Source, e.Target = f.srcAdmin, f.tgtAdmin
	res, err := e.copy(ctx, f.spec, Hooks{BeforeSend: func() {
		mu.Lock()
		sends = append(sends, time.Now())
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Relayed != messages {
		t.Errorf("result %+v", res)
	}
	checkSameSet(t, f.want, consumeAll(t, ctx, f.tgtAdmin, f.tgt+"::"+f.tgt))
	mu.Lock()
	defer mu.Unlock()
	m, burst := measure(sends, time.Time{}), limit*pacerBurst
	t.Logf("copy sends: %s", m)
	if float64(m.peak1s) > limit+burst+1 {
		t.Errorf("%d messages were sent within one second; the cap of %.0f allows %.0f", m.peak1s, limit, limit+burst)
	}
	if allowed := limit*m.span.Seconds() + burst + 1; float64(m.n) > allowed {
		t.Errorf("%d messages were sent in %s; the cap of %.0f allows %.0f", m.n, m.span, limit, allowed)
	}
}
