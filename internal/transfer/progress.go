package transfer

import (
	"sync"
	"sync/atomic"
	"time"
)

// Phase is what a run is doing.
type Phase string

// The phases of a run, in the order a run goes through them; a return has its own.
const (
	PhaseStaging   Phase = "staging"   // moving the selection into staging (expiring messages first)
	PhaseRelaying  Phase = "relaying"  // relaying staged messages while the rest is staged
	PhaseFinishing Phase = "finishing" // removing the empty staging queue and its settings
	PhaseReturning Phase = "returning" // putting staged messages back on the source
)

// progress is what a run did in this process and what it does now: its counters, its phase,
// why it waits, and the reports of them to Options.Progress. Staging and relaying overlap, so it
// is safe for concurrent use; nothing outside this file changes its fields.
type progress struct {
	runID   string
	started time.Time
	notify  func(Progress) // Options.Progress; nil for none

	staged, returned       atomic.Int64
	expiryKept, expiryLost atomic.Int64
	// relayed counts each relayed message once, across reconnects and processes.
	relayed *relayTally

	mu      sync.Mutex
	phase   Phase
	waiting string
	// reportMu keeps the callback from being called by two goroutines at once.
	reportMu sync.Mutex
}

func newProgress(runID string, phase Phase, notify func(Progress)) *progress {
	return &progress{runID: runID, started: time.Now(), notify: notify, relayed: newRelayTally(0, nil), phase: phase}
}

// continueAfter counts on from what earlier processes of the run relayed: before messages, and
// the ids of the batches they last confirmed (see relayTally). Called before relaying starts.
func (p *progress) continueAfter(before int64, confirmed []int64) {
	p.relayed = newRelayTally(before, confirmed)
}

// setPhase enters phase and reports it.
func (p *progress) setPhase(phase Phase) {
	p.mu.Lock()
	p.phase = phase
	p.mu.Unlock()
	p.report("")
}

// enterPhase enters phase for a while: the returned function goes back to the phase before.
func (p *progress) enterPhase(phase Phase) (leave func()) {
	p.mu.Lock()
	before := p.phase
	p.phase = phase
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.phase = before
		p.mu.Unlock()
	}
}

// setWaiting records why the run waits ("" when it no longer does) and reports a change.
func (p *progress) setWaiting(why string) {
	p.mu.Lock()
	changed := p.waiting != why
	p.waiting = why
	p.mu.Unlock()
	if changed {
		p.report(why)
	}
}

// note reports a passing event (a reconnection, what the relay connected to) without
// recording it as the reason the run waits.
func (p *progress) note(what string) { p.report(what) }

// addStaged counts n messages moved into staging and reports them.
func (p *progress) addStaged(n int64) {
	p.staged.Add(n)
	p.report("")
}

// addReturned counts n messages put back on the source and reports them.
func (p *progress) addReturned(n int64) {
	p.returned.Add(n)
	p.report("")
}

// addExpiry counts what happened to the expiry of one relayed message.
func (p *progress) addExpiry(fate expiryFate) {
	switch fate {
	case expiryKept:
		p.expiryKept.Add(1)
	case expiryLost:
		p.expiryLost.Add(1)
	}
}

// addExpiryLost counts n staged messages whose expiry could not be kept.
func (p *progress) addExpiryLost(n int64) { p.expiryLost.Add(n) }

// fill copies what this process did into res.
func (p *progress) fill(res *Result) {
	res.Staged, res.Returned = p.staged.Load(), p.returned.Load()
	res.Relayed, res.RelayedTotal, res.Resent = p.relayed.counts()
	res.ExpiryKept, res.ExpiryLost = p.expiryKept.Load(), p.expiryLost.Load()
}

// report calls the progress callback with a snapshot; waiting, when not empty, stands for the
// recorded reason.
func (p *progress) report(waiting string) {
	if p.notify == nil {
		return
	}
	p.mu.Lock()
	phase := p.phase
	if waiting == "" {
		waiting = p.waiting
	}
	p.mu.Unlock()
	staged := p.staged.Load()
	relayed, _, _ := p.relayed.counts()
	elapsed := time.Since(p.started)
	rate := 0.0
	if secs := elapsed.Seconds(); secs > 0 {
		rate = float64(relayed) / secs
	}
	p.reportMu.Lock()
	defer p.reportMu.Unlock()
	p.notify(Progress{RunID: p.runID, Phase: phase, Staged: staged, Relayed: relayed, Returned: p.returned.Load(),
		Remaining: max(staged-relayed, 0), Rate: rate, Waiting: waiting, Elapsed: elapsed})
}
