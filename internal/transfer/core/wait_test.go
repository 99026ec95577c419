package core

import (
	"math"
	"testing"
	"time"
)

// Table tests of the retry backoff.

func TestBackoff_DoublesFrom250msUpToACapOf5s(t *testing.T) {
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{0, 250 * time.Millisecond},
		{1, 500 * time.Millisecond},
		{2, time.Second},
		{3, 2 * time.Second},
		{4, 4 * time.Second},
		{5, 5 * time.Second},
		{6, 5 * time.Second},
		{1000, 5 * time.Second},
		{math.MaxInt, 5 * time.Second}, // no overflow however long a wait lasts
	}
	for _, tt := range tests {
		if got := Backoff(tt.attempt); got != tt.want {
			t.Errorf("Backoff(%d) = %v, want %v", tt.attempt, got, tt.want)
		}
	}
}

func TestBackoff_NeverShrinks(t *testing.T) {
	for attempt := 1; attempt < 100; attempt++ {
		if Backoff(attempt) < Backoff(attempt-1) {
			t.Fatalf("Backoff(%d) = %v < Backoff(%d) = %v", attempt, Backoff(attempt), attempt-1, Backoff(attempt-1))
		}
	}
}
