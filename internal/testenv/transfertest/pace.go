package transfertest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// PaceMeasure is what a series of event times shows of their pace.
type PaceMeasure struct {
	N                      int
	Span                   time.Duration // from the first event to the last
	Rate                   float64       // events a second between the first and the last
	Peak1s, Peak2s, Peak3s int           // the most events within any one, two and three seconds
	Longest                time.Duration // the longest pause between two events
}

func (m PaceMeasure) String() string {
	return fmt.Sprintf("%d at %.1f/s (busiest 1 s: %d, 2 s: %d, 3 s: %d; longest pause %s)", m.N, m.Rate, m.Peak1s, m.Peak2s, m.Peak3s,
		m.Longest.Round(time.Millisecond))
}

// Measure measures the events at or after from.
func Measure(events []time.Time, from time.Time) PaceMeasure {
	var ts []time.Time
	for _, e := range events {
		if !e.Before(from) {
			ts = append(ts, e)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	m := PaceMeasure{N: len(ts)}
	if len(ts) < 2 {
		return m
	}
	m.Span = ts[len(ts)-1].Sub(ts[0])
	m.Rate = float64(len(ts)-1) / m.Span.Seconds()
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
	m.Peak1s, m.Peak2s, m.Peak3s = peak(time.Second), peak(2*time.Second), peak(3*time.Second)
	for i := 1; i < len(ts); i++ {
		m.Longest = max(m.Longest, ts[i].Sub(ts[i-1]))
	}
	return m
}

// Arrival is a message a consumer took, and when it arrived.
type Arrival struct {
	Msg *amqp.Message
	At  time.Time
}

// ConsumeTimed takes n messages from fqqn as they arrive and sends each, with the time it
// arrived, to out.
func ConsumeTimed(ctx context.Context, c *artemis.Client, fqqn string, n int, out chan<- Arrival) error {
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
		out <- Arrival{msg, time.Now()}
		if err := r.Accept(ctx, msg); err != nil {
			return err
		}
	}
	return nil
}
