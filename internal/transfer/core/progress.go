package core

import (
	"context"
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

// CountKind says how well a run knows the size of its selection.
type CountKind int8

const (
	// CountAtLeast: the selection holds at least Progress.Selected messages. A run knows no
	// more while it stages a selection the broker could not count (a filter on a queue deeper
	// than the broker's browse page, a count the user may not make).
	CountAtLeast CountKind = iota
	// CountEstimate: counted on the source when this process started; exact once staging is
	// complete.
	CountEstimate
	// CountExact: staging is complete, so the selection is what was staged.
	CountExact
)

// progressBeat is how often a working run reports even when nothing happens (a wait, a slow
// target), so that a log's cadence does not depend on batches completing.
const progressBeat = time.Second

// rateWindow is how far back the rate a run reports looks: recent enough to follow a target
// that slows down, long enough to smooth the batches.
const rateWindow = 30 * time.Second

// Tracker is what a run did in this process and what it does now: its counters, its phase,
// why it waits, and the reports of them to Options.Progress. Staging and relaying overlap, so it
// is safe for concurrent use; nothing outside this file changes its fields.
type Tracker struct {
	runID   string
	started time.Time
	notify  func(Progress) // Options.Progress; nil for none

	staged, returned       atomic.Int64
	expiryKept, expiryLost atomic.Int64
	// relayed counts each relayed message once, across reconnects and processes.
	Relayed *Tally

	mu      sync.Mutex
	phase   Phase
	waiting string
	// waitingSince is when the current wait began; waited sums the waits that ended, and
	// lastWaiting is the reason of the latest wait.
	waitingSince time.Time
	waited       time.Duration
	lastWaiting  string
	// selection is what this process learnt of the run's selection when it started.
	selection selectionStart
	meter     rateMeter
	// reportMu keeps the callback from being called by two goroutines at once.
	reportMu sync.Mutex
}

// selectionStart is what a process knows of its run's selection when it starts working on it.
type selectionStart struct {
	inStaging  int64     // staged by earlier processes and not relayed
	sourceLeft int64     // selected messages still on the source, as counted
	kind       CountKind // how sourceLeft is known: CountAtLeast (0 when not counted) or CountEstimate
	complete   bool      // staging is complete
}

func NewTracker(runID string, phase Phase, notify func(Progress)) *Tracker {
	return &Tracker{runID: runID, started: time.Now(), notify: notify, Relayed: newRelayTally(0, nil), phase: phase}
}

// ContinueAfter counts on from what earlier processes of the run relayed: before messages, and
// the ids of the batches they last confirmed (see relayTally). Called before relaying starts.
func (p *Tracker) ContinueAfter(before int64, confirmed []int64) {
	p.Relayed = newRelayTally(before, confirmed)
}

// ExpectSelection records what is left of the run's selection as this process starts: on the
// source (sourceLeft, known as kind) and in staging.
func (p *Tracker) ExpectSelection(inStaging, sourceLeft int64, kind CountKind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.selection = selectionStart{inStaging: max(inStaging, 0), sourceLeft: max(sourceLeft, 0), kind: kind}
}

// StagingComplete records that the whole selection has reached staging: from now on the
// selection's size is exact.
func (p *Tracker) StagingComplete() {
	p.mu.Lock()
	p.selection.complete = true
	p.mu.Unlock()
}

// SetPhase enters phase and reports it.
func (p *Tracker) SetPhase(phase Phase) {
	p.mu.Lock()
	p.phase = phase
	p.mu.Unlock()
	p.Report("")
}

// EnterPhase enters phase for a while: the returned function goes back to the phase before.
func (p *Tracker) EnterPhase(phase Phase) (leave func()) {
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

// SetWaiting records why the run waits ("" when it no longer does) and reports a change.
func (p *Tracker) SetWaiting(why string) {
	now := time.Now()
	p.mu.Lock()
	changed := p.waiting != why
	switch {
	case p.waiting == "" && why != "":
		p.waitingSince = now
	case p.waiting != "" && why == "":
		p.waited += now.Sub(p.waitingSince)
	}
	if why != "" {
		p.lastWaiting = why
	}
	p.waiting = why
	p.mu.Unlock()
	if changed {
		p.Report("")
	}
}

// Note reports a passing event (what the relay connected to) without recording it as the
// reason the run waits.
func (p *Tracker) Note(what string) { p.Report(what) }

// AddStaged counts n messages moved into staging and reports them.
func (p *Tracker) AddStaged(n int64) {
	p.staged.Add(n)
	p.Report("")
}

// AddReturned counts n messages put back on the source and reports them.
func (p *Tracker) AddReturned(n int64) {
	p.returned.Add(n)
	p.Report("")
}

// AddExpiry counts what happened to the expiry of one relayed message.
func (p *Tracker) AddExpiry(fate ExpiryFate) {
	switch fate {
	case ExpiryKept:
		p.expiryKept.Add(1)
	case ExpiryLost:
		p.expiryLost.Add(1)
	}
}

// AddExpiryLost counts n staged messages whose expiry could not be kept.
func (p *Tracker) AddExpiryLost(n int64) { p.expiryLost.Add(n) }

// Fill copies what this process did into res.
func (p *Tracker) Fill(res *Result) {
	res.Staged, res.Returned = p.staged.Load(), p.returned.Load()
	res.Relayed, res.RelayedTotal, res.Resent = p.Relayed.Counts()
	res.ExpiryKept, res.ExpiryLost = p.expiryKept.Load(), p.expiryLost.Load()
	res.Duration = time.Since(p.started)
}

// Beat reports every progressBeat until ctx ends or the returned stop is called, so that a
// run that waits still reports.
func (p *Tracker) Beat(ctx context.Context) (stop func()) {
	if p.notify == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(progressBeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.Report("")
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// Report calls the progress callback with a snapshot; note, when not empty, is a passing event.
func (p *Tracker) Report(note string) {
	if p.notify == nil {
		return
	}
	now := time.Now()
	relayed, total, _ := p.Relayed.Counts()
	staged, confirmations := p.staged.Load(), p.Relayed.Confirmations()
	p.mu.Lock()
	snap := Progress{RunID: p.runID, Phase: p.phase, Staged: staged, Relayed: relayed, Returned: p.returned.Load(),
		Moved: total, Waiting: p.waiting, Waited: p.waited, LastWaiting: p.lastWaiting, Note: note, Elapsed: now.Sub(p.started)}
	if p.waiting != "" {
		snap.WaitingFor = now.Sub(p.waitingSince)
		snap.Waited += snap.WaitingFor
	}
	p.meter.add(now, relayed)
	snap.Rate = p.meter.rate(now, relayed)
	counts := runCounts{before: total - relayed, start: p.selection, staged: staged, relayed: relayed, rate: snap.Rate}
	p.mu.Unlock()
	snap.Selected, snap.SelectedKind, snap.ETA = counts.figures()
	snap.Remaining = max(counts.start.inStaging+staged-confirmations, 0)
	p.reportMu.Lock()
	defer p.reportMu.Unlock()
	p.notify(snap)
}

// runCounts are the counts a run's selection size, percentage and ETA come from.
type runCounts struct {
	before  int64          // relayed by earlier processes
	start   selectionStart // what this process found when it started
	staged  int64          // moved into staging by this process
	relayed int64          // relayed by this process
	rate    float64        // messages per second, recently
}

// figures returns the size of the run's whole selection as known now, how it is known, and
// the time left to relay the rest of it at the recent rate (-1 when it cannot be told: no rate
// yet, or only a lower bound of the selection). What is staged so far is never taken for the
// selection: until staging is complete the size comes from the count made when this process
// started, over the whole selection.
func (c runCounts) figures() (selected int64, kind CountKind, eta time.Duration) {
	moved := c.before + c.relayed
	base := c.before + c.start.inStaging
	switch {
	case c.start.complete:
		selected, kind = base+c.staged, CountExact
	default:
		selected, kind = base+max(c.start.sourceLeft, c.staged), c.start.kind
	}
	selected = max(selected, moved)
	switch {
	case selected == moved:
		return selected, kind, 0
	case kind == CountAtLeast || c.rate <= 0:
		return selected, kind, -1
	}
	secs := float64(selected-moved) / c.rate
	return selected, kind, time.Duration(secs * float64(time.Second)).Round(time.Second)
}

// rateMeter measures a count's recent rate from samples taken at most every second. Its first
// sample is the first report with a count above zero: the time a run spends before its first
// confirmation (checks, staging, connecting) is not relaying time, and counting it made a
// run's first ETA many times too long.
type rateMeter struct {
	samples []rateSample // oldest first; the first one at or before the window's start
}

type rateSample struct {
	at time.Time
	n  int64
}

func (m *rateMeter) add(now time.Time, n int64) {
	k := len(m.samples)
	if k == 0 && n == 0 || k > 0 && now.Sub(m.samples[k-1].at) < time.Second {
		return
	}
	m.samples = append(m.samples, rateSample{now, n})
	// Keep one sample at or before the window's start, so that the rate spans the window.
	drop := 0
	for drop+1 < len(m.samples) && !m.samples[drop+1].at.After(now.Add(-rateWindow)) {
		drop++
	}
	m.samples = m.samples[drop:]
}

// rate is the count's rate per second since the oldest sample; 0 for less than a second.
func (m *rateMeter) rate(now time.Time, n int64) float64 {
	if len(m.samples) == 0 {
		return 0
	}
	first := m.samples[0]
	secs := now.Sub(first.at).Seconds()
	if secs < 1 {
		return 0
	}
	return float64(n-first.n) / secs
}
