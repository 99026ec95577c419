package transfer

import (
	"context"
	"testing"
	"time"
)

// Table tests of what a run reports: its selection's size, its ETA over the whole selection,
// its recent rate, and the pacing of its sends. None of them needs a broker.

func TestRunCounts_ETACoversTheWholeSelectionNotWhatIsStagedSoFar(t *testing.T) {
	tests := []struct {
		name     string
		counts   runCounts
		selected int64
		kind     CountKind
		eta      time.Duration
	}{
		{
			// The case: 2,000 of 10,000 staged, 1,000 relayed at 500/s. The rest of the
			// selection, not the rest of staging, is what is left: 9,000 at 500/s.
			name:     "early in a new run, staging ahead of the relay",
			counts:   runCounts{start: selectionStart{sourceLeft: 10_000, kind: CountEstimate}, staged: 2000, relayed: 1000, rate: 500},
			selected: 10_000, kind: CountEstimate, eta: 18 * time.Second,
		},
		{
			name:     "before anything is staged",
			counts:   runCounts{start: selectionStart{sourceLeft: 10_000, kind: CountEstimate}, rate: 0},
			selected: 10_000, kind: CountEstimate, eta: -1,
		},
		{
			name:     "staging complete: exact, and fewer than counted (messages consumed meanwhile)",
			counts:   runCounts{start: selectionStart{sourceLeft: 10_000, kind: CountEstimate, complete: true}, staged: 9000, relayed: 6000, rate: 1000},
			selected: 9000, kind: CountExact, eta: 3 * time.Second,
		},
		{
			name:     "staged more than counted (produced before t0, counted after)",
			counts:   runCounts{start: selectionStart{sourceLeft: 1000, kind: CountEstimate}, staged: 3000, relayed: 1500, rate: 100},
			selected: 3000, kind: CountEstimate, eta: 15 * time.Second,
		},
		{
			// A resumed run: 4,000 relayed by an earlier process, 1,000 left in staging, 5,000
			// still on the source; this process relayed 500 at 250/s.
			name:     "resumed run counts what earlier processes relayed and staged",
			counts:   runCounts{before: 4000, start: selectionStart{inStaging: 1000, sourceLeft: 5000, kind: CountEstimate}, staged: 2000, relayed: 500, rate: 250},
			selected: 10_000, kind: CountEstimate, eta: 22 * time.Second,
		},
		{
			name:     "a filter the broker counted only at the head of the queue: a lower bound, no ETA",
			counts:   runCounts{start: selectionStart{sourceLeft: 200, kind: CountAtLeast}, staged: 4000, relayed: 1000, rate: 500},
			selected: 4000, kind: CountAtLeast, eta: -1,
		},
		{
			name:     "a lower bound becomes exact when staging is complete",
			counts:   runCounts{start: selectionStart{sourceLeft: 200, kind: CountAtLeast, complete: true}, staged: 4000, relayed: 1000, rate: 500},
			selected: 4000, kind: CountExact, eta: 6 * time.Second,
		},
		{
			name:     "done",
			counts:   runCounts{start: selectionStart{sourceLeft: 10_000, kind: CountEstimate, complete: true}, staged: 10_000, relayed: 10_000, rate: 800},
			selected: 10_000, kind: CountExact, eta: 0,
		},
		{
			name:     "never less than moved",
			counts:   runCounts{before: 10, start: selectionStart{kind: CountEstimate, complete: true}, staged: 0, relayed: 5, rate: 5},
			selected: 15, kind: CountExact, eta: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			selected, kind, eta := tt.counts.figures()
			if selected != tt.selected || kind != tt.kind || eta != tt.eta {
				t.Errorf("figures() = %d, %d, %s; want %d, %d, %s", selected, kind, eta, tt.selected, tt.kind, tt.eta)
			}
		})
	}
}

func TestRateMeter_RateOverTheLastWindowFollowsASlowdown(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var m rateMeter
	m.add(t0.Add(-time.Minute), 0) // nothing relayed yet (staging, connecting): no origin
	if r := m.rate(t0, 0); r != 0 || len(m.samples) != 0 {
		t.Errorf("rate before the first confirmation = %v, want 0 and no sample", r)
	}
	m.add(t0, 0)
	if r := m.rate(t0.Add(500*time.Millisecond), 400); r != 0 {
		t.Errorf("rate within the first second = %v, want 0", r)
	}
	// 1,000 a second for a minute, then 100 a second for a minute.
	n := int64(0)
	for s := 1; s <= 120; s++ {
		if s <= 60 {
			n += 1000
		} else {
			n += 100
		}
		now := t0.Add(time.Duration(s) * time.Second)
		m.add(now, n)
		if s == 60 {
			if r := m.rate(now, n); r != 1000 {
				t.Errorf("rate after a minute at 1000/s = %v, want 1000", r)
			}
		}
	}
	if r := m.rate(t0.Add(120*time.Second), n); r != 100 {
		t.Errorf("rate after a minute at 100/s = %v, want 100 (the last 30 s only)", r)
	}
	if len(m.samples) > int(rateWindow/time.Second)+2 {
		t.Errorf("the meter keeps %d samples, more than its window needs", len(m.samples))
	}
}

func TestPacer_HoldsTheAverageToTheCapWithASmallBurst(t *testing.T) {
	tests := []struct {
		rate      float64
		burst     float64
		batchSize int
	}{{500, 50, 250}, {10, 1, 5}, {1, 1, 1}, {0.5, 1, 1}, {100_000, 10_000, 50_000}}
	for _, tt := range tests {
		p := newPacer(tt.rate)
		if p.burst != tt.burst || pacedBatchSize(tt.rate) != tt.batchSize {
			t.Errorf("cap %v: burst %v, batch %d; want %v, %d", tt.rate, p.burst, pacedBatchSize(tt.rate), tt.burst, tt.batchSize)
		}
		// Messages sent as soon as they are due, on a clock that only the waits move: the
		// first burst leaves at once, then one every 1/rate.
		now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		start := now
		n := 2000 + int(tt.burst)
		sent := make([]time.Time, 0, n)
		for range n {
			now = now.Add(p.reserve(now))
			sent = append(sent, now)
		}
		elapsed := now.Sub(start).Seconds()
		if want := (float64(n) - tt.burst) / tt.rate; elapsed < want*0.999 || elapsed > want*1.001 {
			t.Errorf("cap %v: %d messages took %.3fs, want %.3fs", tt.rate, n, elapsed, want)
		}
		// No window of one second holds more than a second's worth plus the burst.
		for i, j := 0, 0; i < len(sent); i++ {
			for j < len(sent) && sent[j].Sub(sent[i]) < time.Second {
				j++
			}
			if got := float64(j - i); got > tt.rate+tt.burst+1e-9 {
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
	if rate := (n - p.burst) / now.Sub(start).Seconds(); rate < 495 || rate > 500.5 {
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
