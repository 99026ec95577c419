package bench

// The scale curve (issue #25): one queue of 1 KiB messages, from ten thousand to millions, copied
// and then moved by our relay, for the rate and the relay's peak memory at each depth.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// ScaleCurve is our relay's rate and peak memory as one queue deepens.
type ScaleCurve struct {
	// SourceHeap and TargetHeap are the brokers' maximum heap (-Xmx): a deep queue pages, and
	// what a broker keeps in its heap for each paged message grows with the depth.
	SourceHeap string `json:"source_heap,omitempty"`
	TargetHeap string `json:"target_heap,omitempty"`
	// SourceGlobalMaxSize and TargetGlobalMaxSize are the brokers' memory for messages before
	// their addresses page (global-max-size); empty: Artemis's default, half the heap.
	SourceGlobalMaxSize string       `json:"source_global_max_size,omitempty"`
	TargetGlobalMaxSize string       `json:"target_global_max_size,omitempty"`
	Points              []ScalePoint `json:"points"`
}

// ScalePoint is one depth of the curve: one fill of the source queue, copied to a target queue
// and then moved to another. A copy leaves the source as it was, so the move takes the same
// fill: one fill of a deep queue instead of two.
type ScalePoint struct {
	Case Case               `json:"case"`
	Name string             `json:"name"`
	Fill harness.FillResult `json:"fill"`
	// SourcePaging says whether the source queue's address was paging once filled: a queue
	// deeper than the broker's memory for messages is paged to disk, as on an operator's broker.
	SourcePaging bool `json:"source_paging"`
	// Copy is our copy of the filled queue (nil: the copy contender was not selected). Its check
	// consumes the copy's target and reads the source's count: the move after it checks the
	// source's messages themselves, since it must deliver every one of them once.
	Copy *Trial `json:"copy,omitempty"`
	// Refilled says that the copy failed and the source was emptied and filled again for the move.
	Refilled bool `json:"refilled,omitempty"`
	// Move is our move of the same queue (nil: our move was not selected), checked as every move.
	Move *Trial `json:"move,omitempty"`
	// CopyCheckSeconds and MoveCheckSeconds are how long the checks after each took (consuming
	// the target queue): not part of the rates.
	CopyCheckSeconds float64 `json:"copy_check_s,omitempty"`
	MoveCheckSeconds float64 `json:"move_check_s,omitempty"`
	// BrokerErrors are the brokers' out-of-memory errors logged during the point: they explain a
	// failed run that the relay saw as a broker not answering.
	BrokerErrors []string `json:"broker_errors,omitempty"`
	// Seconds is the whole point: fill, copy, move and checks.
	Seconds float64 `json:"seconds"`
}

// OK says whether every run of the point was correct.
func (p ScalePoint) OK() bool {
	return (p.Copy == nil || p.Copy.OK) && (p.Move == nil || p.Move.OK) && (p.Copy != nil || p.Move != nil)
}

// measureScale runs the profile's scale cases, shallowest first, with our copy and our move
// among the selected contenders.
func (b *bench) measureScale(ctx context.Context) error {
	var copyCt, moveCt *Contender
	for i := range b.contenders {
		switch b.contenders[i].ID {
		case ContenderCopy:
			copyCt = &b.contenders[i]
		case ContenderOurs:
			moveCt = &b.contenders[i]
		}
	}
	if copyCt == nil && moveCt == nil {
		return errors.New("the scale curve needs the contender ours or ours-copy")
	}
	dir := b.cfg.Env.StateDir
	b.res.Scale = &ScaleCurve{SourceHeap: brokerHeap(b.sourcePID), TargetHeap: brokerHeap(b.targetPID),
		SourceGlobalMaxSize: brokerGlobalMaxSize(dir, "source"), TargetGlobalMaxSize: brokerGlobalMaxSize(dir, "target")}
	for _, c := range b.cfg.Profile.ScaleCases {
		b.logf("scale curve: %s, filled once, copied then moved by our relay", c.Name())
		pt := b.scalePoint(ctx, c, copyCt, moveCt)
		b.res.Scale.Points = append(b.res.Scale.Points, pt)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// scalePoint fills one source queue with c, copies it (copyCt, when set) to one target queue,
// removes that, and moves the same queue (moveCt, when set) to another.
func (b *bench) scalePoint(ctx context.Context, c Case, copyCt, moveCt *Contender) (pt ScalePoint) {
	began := time.Now()
	pt = ScalePoint{Case: c, Name: c.Name()}
	health := b.brokerHealth()
	defer func() {
		pt.Seconds = time.Since(began).Seconds()
		pt.BrokerErrors = b.brokerHealth().since(health)
	}()
	tag := b.uniqueTag(fmt.Sprintf("scale-%s-", c.Slug()))
	srcQ := "bench." + tag + ".src"
	failed := func(id string, err error) *Trial {
		b.logf("scale %s %s: FAILED: %v", c.Name(), id, err)
		return &Trial{Contender: id, Rep: 1, Error: err.Error()}
	}
	if err := b.srcAdmin.CreateQueue(ctx, runQueue(srcQ), false); err != nil {
		pt.Move = failed("fill", fmt.Errorf("creating the source queue: %w", err))
		return pt
	}
	defer b.dropQueues(ctx, srcQ, "")
	if err := b.fillScale(ctx, c, srcQ, tag, &pt); err != nil {
		pt.Move = failed("fill", err)
		return pt
	}
	if copyCt != nil {
		tgtQ := srcQ + "-copy.tgt"
		pt.Copy, pt.CopyCheckSeconds = b.scaleRun(ctx, c, *copyCt, srcQ, tgtQ, tag)
		b.dropQueues(ctx, "", tgtQ) // frees the target's journal before the move
		if ctx.Err() != nil {
			return pt
		}
		if !pt.Copy.OK && moveCt != nil {
			// The source may no longer hold the fill: the move gets a fresh one.
			b.logf("scale %s: the copy failed; emptying and filling the source again for the move", c.Name())
			pt.Refilled = true
			b.dropQueues(ctx, srcQ, "")
			if err := b.srcAdmin.CreateQueue(ctx, runQueue(srcQ), false); err != nil {
				pt.Move = failed(moveCt.ID, fmt.Errorf("creating the source queue again: %w", err))
				return pt
			}
			if err := b.fillScale(ctx, c, srcQ, tag, &pt); err != nil {
				pt.Move = failed(moveCt.ID, err)
				return pt
			}
		}
	}
	if moveCt != nil {
		tgtQ := srcQ + "-move.tgt"
		pt.Move, pt.MoveCheckSeconds = b.scaleRun(ctx, c, *moveCt, srcQ, tgtQ, tag)
		b.dropQueues(ctx, "", tgtQ)
	}
	return pt
}

// fillScale fills srcQ with c, checks its count and records whether its address pages.
func (b *bench) fillScale(ctx context.Context, c Case, srcQ, tag string, pt *ScalePoint) error {
	fill, err := b.fill(ctx, c, srcQ, tag)
	if err != nil {
		return fmt.Errorf("filling the source queue: %w", err)
	}
	pt.Fill = fill
	q, err := b.srcAdmin.Queue(ctx, srcQ)
	if err != nil {
		return fmt.Errorf("counting the filled source queue: %w", err)
	}
	if q.MessageCount != int64(c.Count) {
		return fmt.Errorf("the filled source queue holds %d messages, want %d", q.MessageCount, c.Count)
	}
	if u, err := b.srcAdmin.AddressUsage(ctx, q.Address); err == nil {
		pt.SourcePaging = u.Paging
	} else {
		b.logf("scale %s: reading whether the source pages: %v", c.Name(), err)
	}
	b.logf("scale %s: filled in %.1f s (%.0f msg/s), source paging: %t", c.Name(), fill.Seconds, fill.MsgsPerSec, pt.SourcePaging)
	return nil
}

// scaleRun copies or moves (ct) the filled srcQ to a new target queue tgtQ with our relay and
// checks the result; it returns the run and how long its check took.
func (b *bench) scaleRun(ctx context.Context, c Case, ct Contender, srcQ, tgtQ, tag string) (*Trial, float64) {
	run := &Trial{Contender: ct.ID, Rep: 1}
	fail := func(err error) (*Trial, float64) {
		run.OK, run.Error = false, err.Error()
		b.logf("scale %s %s: FAILED: %v", c.Name(), ct.ID, err)
		return run, 0
	}
	if err := b.tgtAdmin.CreateQueue(ctx, runQueue(tgtQ), false); err != nil {
		return fail(fmt.Errorf("creating the target queue: %w", err))
	}
	spec := transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "source", Queue: srcQ},
		Target: transfer.Endpoint{Broker: "target", Queue: tgtQ}}
	ledgerDSN := ""
	if ct.Copy {
		spec.Mode, ledgerDSN = transfer.ModeCopy, b.ledger.DSN
	}
	src0, tgt0 := b.brokerCPU()
	b.relayInto(ctx, run, spec, ledgerDSN, runTimeout(c), false)
	src1, tgt1 := b.brokerCPU()
	run.SourceCPU, run.TargetCPU = (src1 - src0).Seconds(), (tgt1 - tgt0).Seconds()
	if w := run.Process.WallSeconds; w > 0 {
		run.MsgsPerSec = float64(c.Count) / w
		run.MiBPerSec = float64(c.Bytes()) / float64(mib) / w
	}

	checkStart := time.Now()
	verify := Verify
	if ct.Copy {
		verify = verifyCopyTarget
	}
	check, err := verify(ctx, b.srcAdmin, b.tgtAdmin, srcQ, tgtQ, c.Count, c.Size, tag, stagingPrefixOf(spec))
	checkSeconds := time.Since(checkStart).Seconds()
	run.Check = check
	switch {
	case err != nil:
		return fail(fmt.Errorf("checking the run: %w (run error: %s)", err, run.Error))
	case run.Error != "":
		return fail(fmt.Errorf("%s (check: %s)", run.Error, orOK(check.Problem)))
	case !check.OK:
		return fail(errors.New("lost or doubled messages: " + check.Problem))
	}
	run.OK = true
	b.logf("scale %s %-9s %8.0f msg/s, %.1f s, peak RSS %.1f MiB, broker CPU %.1fs+%.1fs, ok (check %.1f s)",
		c.Name(), ct.ID, run.MsgsPerSec, run.Process.WallSeconds, float64(run.Process.PeakRSSKiB)/1024, run.SourceCPU, run.TargetCPU, checkSeconds)
	return run, checkSeconds
}

// AllCorrect says whether every run in res lost and doubled nothing and did not fail: the
// cases' runs and the scale curve's.
func AllCorrect(res *Results) bool {
	for _, c := range res.Cases {
		for _, t := range c.Runs {
			if !t.OK {
				return false
			}
		}
	}
	if res.Scale != nil {
		for _, p := range res.Scale.Points {
			if !p.OK() {
				return false
			}
		}
	}
	return true
}
