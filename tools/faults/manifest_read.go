package faults

// slow-manifest-read: a move interrupted, then the next apply's read of the run's manifest
// stalled at the source broker. A slow read must not pass for a missing manifest: the run is
// resumed, not discarded and started again.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// manifestReads is how many reads of the manifest a resume makes, in order: finding the run,
// resuming it, and reading its records (the in-flight one included) under its lease.
const manifestReads = 3

// lateCount is how many messages the iteration produces on the source after the first apply
// was killed: produced after the run's t0, they are not the run's, and a resumed run leaves
// them there; a run started again would move them.
const lateCount = 50

// browseMode is how an AMQP attach of a browser shows on the wire: its source's distribution
// mode, the symbol "copy". A consumer's attach (the run's lease) has none.
var browseMode = []byte("\xa3\x04copy")

// runSlowManifestRead kills the provider of the first apply once the target holds
// plan.TriggerAt messages, produces lateCount messages more on the source, and applies again
// with the source's connections stalling for plan.Downtime once the apply has attached its
// plan.Point-th browser of the run's manifest queue; then applies until one succeeds. The
// late messages are counted in tally's Late.
func (h *runner) runSlowManifestRead(ctx context.Context, ws *harness.Workspace, plan Plan, target *artemis.Client, tally *Tally, it *Iteration) {
	applyLimit := h.cfg.ApplyTimeout + time.Minute
	nth, err := strconv.Atoi(strings.TrimPrefix(plan.Point, "read:"))
	if err != nil {
		it.Problem = fmt.Sprintf("the plan's read %q: %v", plan.Point, err)
		return
	}
	apply, err := ws.StartApply(ctx, applyLimit)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	it.Applies = 1
	reached, n := h.waitForTrigger(ctx, apply, plan, target, it.TargetQueue)
	if !reached {
		it.Notes = append(it.Notes, fmt.Sprintf("the first apply ended before the target held %d messages: the fault was not injected", plan.TriggerAt))
		it.Recovered = h.reapply(ctx, ws, apply, waitApply(apply), applyLimit, it) == nil
		return
	}
	faultAt := time.Now()
	it.InjectedAt, it.InjectedTarget = faultAt.Sub(apply.Started()).Seconds(), n
	pid, err := apply.Provider(providerWait)
	if err == nil {
		err = harness.Kill(pid)
	}
	if err != nil {
		it.Notes = append(it.Notes, "killing the provider: "+err.Error())
	}
	_ = apply.Wait()
	runID, err := h.stagedRun(ctx)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	late := NewTally(lateTag(plan), lateCount)
	tally.Late = late
	fillCtx, cancel := context.WithTimeout(ctx, time.Minute)
	_, err = harness.Fill(fillCtx, h.admin[brSource], it.SourceQueue, lateCount, MessageSize, late.tag)
	cancel()
	if err != nil {
		it.Problem = "producing the messages after the run's start: " + err.Error()
		return
	}

	manifest := []byte(transfer.ManifestQueue(runID))
	begun, disarm := h.proxies[brSource].StallAfter(func(chunk []byte) bool {
		return bytes.Contains(chunk, manifest) && bytes.Contains(chunk, browseMode)
	}, nth, plan.Downtime)
	next, err := ws.StartApply(ctx, applyLimit)
	if err != nil {
		disarm()
		it.Problem = err.Error()
		return
	}
	it.Applies++
	var stalledAt time.Time
	select {
	case <-begun:
		stalledAt = time.Now()
	case <-next.Done():
	}
	err = waitApply(next)
	disarm()
	select {
	case <-begun:
		if stalledAt.IsZero() {
			stalledAt = time.Now()
		}
		it.Injected = true
		it.Notes = append(it.Notes, fmt.Sprintf("read %d of run %s's manifest stalled %.1f s after the apply started, for %s: %s",
			nth, runID, stalledAt.Sub(next.Started()).Seconds(), plan.Downtime, outcome(err, next)))
		// As an operator sees it: the next apply once the source answers again.
		sleep(ctx, time.Until(stalledAt.Add(plan.Downtime)))
	default:
		it.Notes = append(it.Notes, fmt.Sprintf("the apply read run %s's manifest fewer than %d times: nothing stalled (%s)", runID, nth, outcome(err, next)))
	}
	if h.reapply(ctx, ws, next, err, applyLimit, it) != nil {
		return
	}
	it.Recovered = true
	it.RecoverySeconds = time.Since(faultAt).Seconds()
	ran, err := stateRunID(ws.Dir)
	switch {
	case err != nil:
		it.Problem = err.Error()
	case ran != runID:
		it.Problem = fmt.Sprintf("the apply that succeeded ran run %s, not the interrupted run %s: the run was not resumed", ran, runID)
	default:
		it.Notes = append(it.Notes, "the interrupted run "+runID+" was resumed")
	}
}

// lateTag is the producer id prefix of the messages produced after the run's start.
func lateTag(plan Plan) string { return fmt.Sprintf("l%d", plan.Seed) }

// stateRunID reads the run_id of the transfer in the terraform state of the working directory.
func stateRunID(dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		return "", fmt.Errorf("reading the transfer's state: %w", err)
	}
	var st struct {
		Resources []struct {
			Type      string `json:"type"`
			Instances []struct {
				Attributes struct {
					RunID string `json:"run_id"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return "", fmt.Errorf("reading the transfer's state: %w", err)
	}
	for _, r := range st.Resources {
		if r.Type == "artemis_queue_transfer" && len(r.Instances) == 1 {
			return r.Instances[0].Attributes.RunID, nil
		}
	}
	return "", fmt.Errorf("the state in %s holds no artemis_queue_transfer", dir)
}

// lateProblems are what the checker found wrong with the messages produced after the run's
// start: each must be on the source once, none moved.
func lateProblems(t *Tally) []string {
	if t == nil {
		return nil
	}
	c := t.Counts()
	var problems []string
	if moved := c.Delivered; moved > 0 {
		problems = append(problems, fmt.Sprintf("%d messages produced after the run's start were moved: the run was started again, not resumed", moved))
	}
	if c.Lost > 0 || c.Doubled > 0 || c.InStaging > 0 {
		problems = append(problems, fmt.Sprintf("of the messages produced after the run's start, %d lost, %d doubled, %d in staging", c.Lost, c.Doubled, c.InStaging))
	}
	return problems
}
