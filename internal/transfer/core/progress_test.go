package core

import (
	"testing"
	"time"
)

// Table tests of what a run reports: its selection's size, its ETA over the whole selection,
// and its recent rate. None of them needs a broker.

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
