package core

import (
	"context"
	"sync"
	"time"
)

// sharedOutcomes hands every caller that asks for a key one outcome: the one being made now
// (the caller waits for it), or a finished one that still holds; otherwise the caller makes a
// new one. The transfers of one process share their canaries through it, so that N transfers
// to or from the same broker send one, not N. The zero value is ready to use, and it is safe for
// concurrent use.
type sharedOutcomes[R any] struct {
	mu      sync.Mutex
	entries map[string]*sharedOutcome[R]
}

// sharedOutcome is one outcome: being made while done is open, then its result and when it was
// made.
type sharedOutcome[R any] struct {
	done   chan struct{}
	result R
	at     time.Time
}

func (en *sharedOutcome[R]) finished() bool {
	select {
	case <-en.done:
		return true
	default:
		return false
	}
}

// get returns the outcome for key. holds says whether a finished outcome made at madeAt still
// answers at now (clock's time); produce makes a new one. A caller whose ctx ends while it waits
// for another's gets ctx's error.
func (s *sharedOutcomes[R]) get(ctx context.Context, key string, clock func() time.Time,
	holds func(result R, madeAt, now time.Time) bool, produce func(context.Context) R) (R, error) {
	s.mu.Lock()
	en, ok := s.entries[key]
	if !ok || (en.finished() && !holds(en.result, en.at, clock())) {
		en = &sharedOutcome[R]{done: make(chan struct{})}
		if s.entries == nil {
			s.entries = map[string]*sharedOutcome[R]{}
		}
		s.entries[key] = en
		s.mu.Unlock()
		// Closed however the making ends, so that no waiter waits past it.
		defer close(en.done)
		en.result = produce(ctx)
		en.at = clock()
		return en.result, nil
	}
	s.mu.Unlock()
	select {
	case <-en.done:
		return en.result, nil
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}
