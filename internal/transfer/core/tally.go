package core

import "sync"

// confirmedWindow is how many of the last fully confirmed batches the relay remembers by source
// id. Their acknowledgements on the source may not be stored yet (the broker writes them
// behind the target's confirmations), so a source broker that dies can hand those messages
// back to staging. Together with the two batches in flight it spans four batches: the window the
// target's duplicate-id cache must cover too (the id-cache rule asks for four times batch_size).
const confirmedWindow = 2

// Tally counts the messages a run relayed so that each source message is counted once,
// across reconnects, broker restarts, resumes and processes. A message the target confirmed
// whose acknowledgement the source then lost comes back to staging and is sent again; the
// target's duplicate detection drops that copy, and the tally counts it as resent, not relayed.
//
// It is safe for concurrent use: the relay confirms while progress reports read.
type Tally struct {
	mu sync.Mutex
	// relayed is what this process relayed for the first time; before is what earlier
	// processes relayed, as recorded on the source broker.
	relayed, before int64
	// resent counts the copies sent again of messages the target had already confirmed.
	resent int64
	// recent holds the source ids of the last confirmedWindow confirmed batches (generations,
	// oldest first), and current those confirmed since the last batch ended.
	recent      map[int64]struct{}
	generations [][]int64
	current     []int64
}

// newRelayTally starts a tally after what earlier processes relayed: before messages, and the
// ids of the batches they last confirmed (from the run's in-flight record).
func newRelayTally(before int64, confirmed []int64) *Tally {
	t := &Tally{before: before, recent: map[int64]struct{}{}}
	if len(confirmed) > 0 {
		t.generations = append(t.generations, append([]int64(nil), confirmed...))
		for _, id := range confirmed {
			t.recent[id] = struct{}{}
		}
	}
	return t
}

// Confirmed records that the target confirmed the copy of source message id and that its staged
// original was acknowledged. It reports whether this was a resend of a message already counted.
func (t *Tally) Confirmed(id int64) (resend bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, seen := t.recent[id]; seen {
		t.resent++
		return true
	}
	t.relayed++
	t.recent[id] = struct{}{}
	t.current = append(t.current, id)
	return false
}

// EndBatch closes the current generation of confirmed ids and forgets the oldest one beyond the
// window.
func (t *Tally) EndBatch() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.current) == 0 {
		return
	}
	t.generations = append(t.generations, t.current)
	t.current = nil
	for len(t.generations) > confirmedWindow {
		for _, id := range t.generations[0] {
			delete(t.recent, id)
		}
		t.generations = t.generations[1:]
	}
}

// RecentIDs returns the ids of the remembered confirmed batches, for the in-flight record.
func (t *Tally) RecentIDs() []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]int64, 0, len(t.recent))
	for _, g := range t.generations {
		out = append(out, g...)
	}
	return append(out, t.current...)
}

// Counts returns what this process relayed for the first time, the run's total, and the resends.
func (t *Tally) Counts() (relayed, total, resent int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.relayed, t.before + t.relayed, t.resent
}

// Confirmations is every confirmed message, first sends and resends: what left staging.
func (t *Tally) Confirmations() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.relayed + t.resent
}
