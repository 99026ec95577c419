package core

import (
	"context"
	"testing"
	"time"
)

// Table tests of the pacing of a run's sends under Options.MaxMessagesPerSecond. None of them
// needs a broker.

func TestPacer_HoldsTheAverageToTheCapWithASmallBurst(t *testing.T) {
	tests := []struct {
		rate      float64
		burst     int
		batchSize int
	}{{500, 50, 250}, {10, 1, 5}, {1, 1, 1}, {0.5, 1, 1}, {100_000, 10_000, 50_000}}
	for _, tt := range tests {
		p := newPacer(tt.rate)
		if p.limiter.Burst() != tt.burst || pacedBatchSize(tt.rate) != tt.batchSize {
			t.Errorf("cap %v: burst %v, batch %d; want %v, %d", tt.rate, p.limiter.Burst(), pacedBatchSize(tt.rate), tt.burst, tt.batchSize)
		}
		// Messages sent as soon as they are due, on a clock that only the waits move: the
		// first burst leaves at once, then one every 1/rate.
		now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		start := now
		n := 2000 + tt.burst
		sent := make([]time.Time, 0, n)
		for range n {
			now = now.Add(p.reserve(now))
			sent = append(sent, now)
		}
		elapsed := now.Sub(start).Seconds()
		if want := float64(n-tt.burst) / tt.rate; elapsed < want*0.999 || elapsed > want*1.001 {
			t.Errorf("cap %v: %d messages took %.3fs, want %.3fs", tt.rate, n, elapsed, want)
		}
		// No window of one second holds more than a second's worth plus the burst.
		for i, j := 0, 0; i < len(sent); i++ {
			for j < len(sent) && sent[j].Sub(sent[i]) < time.Second {
				j++
			}
			if got := float64(j - i); got > tt.rate+float64(tt.burst)+1e-9 {
				t.Fatalf("cap %v: %v messages in the second from message %d", tt.rate, got, i)
			}
		}
	}
	if newPacer(0) != nil || newPacer(-1) != nil {
		t.Error("no cap must mean no pacer")
	}
	if err := (*pacer)(nil).wait(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestPacer_AnOversleptTimerIsMadeUpFromTheBurst(t *testing.T) {
	// A busy machine wakes each wait 30% late: the tokens that accrued meanwhile let the next
	// messages go at once, so the average still reaches the cap.
	p := newPacer(500)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	start := now
	const n = 5000
	for range n {
		if d := p.reserve(now); d > 0 {
			now = now.Add(d * 13 / 10)
		}
	}
	// The first burst leaves at once; the rest keeps to the cap.
	if rate := float64(n-p.limiter.Burst()) / now.Sub(start).Seconds(); rate < 495 || rate > 500.5 {
		t.Errorf("rate with late timers = %.1f/s, want 500", rate)
	}
}

func TestOptions_ACapShrinksTheBatchToHalfASecondsWorth(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		want int
	}{
		{Options{}, DefaultBatchSize},
		{Options{MaxMessagesPerSecond: 500}, 250},
		{Options{MaxMessagesPerSecond: 10_000}, DefaultBatchSize},
		{Options{BatchSize: 100, MaxMessagesPerSecond: 20}, 10},
		{Options{BatchSize: 100, MaxMessagesPerSecond: -3}, 100},
	} {
		if got := tt.opts.WithDefaults(); got.BatchSize != tt.want || got.MaxMessagesPerSecond < 0 {
			t.Errorf("%+v: batch %d, cap %v; want batch %d", tt.opts, got.BatchSize, got.MaxMessagesPerSecond, tt.want)
		}
	}
}
