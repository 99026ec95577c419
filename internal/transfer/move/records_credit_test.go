package move

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// TestMove_ARecordTheSourceGrantsNoCreditForStopsTheRunSayingWhy: a source that grants no
// credit to the run's record sends (its disk above max-disk-usage blocks every producer; here the
// staging address is set to block once full, which withholds credit the same way) must not hold
// the apply for as long as that lasts. The run waits its credit grace saying why, then stops
// before sending anything the record would describe, naming what the operator does; the next
// apply, which puts the staging settings back, moves everything exactly once.
func TestMove_ARecordTheSourceGrantsNoCreditForStopsTheRunSayingWhy(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 4*time.Minute)
	const n = 300
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "record.credit")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "rc", n)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	info, err := srcAdmin.BrokerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var runID, waiting string
	var blockErr error
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Graces: core.Graces{Credit: 3 * time.Second},
		Options: core.Options{ChunkSize: 100, BatchSize: 50, Progress: func(p core.Progress) {
			mu.Lock()
			defer mu.Unlock()
			runID = p.RunID
			if strings.Contains(p.Waiting, "granted no credit") {
				waiting = p.Waiting
			}
		}},
		Hooks: core.Hooks{Reached: func(p core.Point) {
			if p != core.PointStagingCreated {
				return
			}
			queues, err := srcAdmin.ListQueues(context.WithoutCancel(ctx), core.StagingPrefix+spec.Key()+"-")
			if err != nil || len(queues) == 0 {
				blockErr = fmt.Errorf("listing the run's queues (%d found): %w", len(queues), err)
				return
			}
			id := runIDFromQueue(queues[0].Name)
			t.Logf("blocking the staging address of run %s", id)
			// The run's own settings, but blocking producers once the address holds one
			// message: the manifest is there, so no record send gets credit.
			blocking := stagingSettings(info.Version, QuarantineQueue(id))
			blocking["addressFullMessagePolicy"], blocking["maxSizeMessages"] = "BLOCK", int64(1)
			blockErr = srcAdmin.AddAddressSettings(context.WithoutCancel(ctx), StagingQueue(id), blocking)
		}}}}
	start := time.Now()
	res, err := e.Move(ctx, spec)
	took := time.Since(start)
	if blockErr != nil {
		t.Fatalf("blocking the staging address: %v", blockErr)
	}
	t.Logf("the run whose records get no credit: %+v after %s: %v", res, took.Round(time.Millisecond), err)
	var withheld *artemis.CreditWithheldError
	if !errors.As(err, &withheld) {
		t.Fatalf("want the run stopped with a *CreditWithheldError, got %v", err)
	}
	for _, say := range []string{"nothing of it is lost or doubled", "apply again once the source broker has room", "max-disk-usage"} {
		if !strings.Contains(err.Error(), say) {
			t.Errorf("the error does not say %q: %v", say, err)
		}
	}
	mu.Lock()
	if !strings.Contains(waiting, ManifestQueue(runID)) {
		t.Errorf("no waiting report named the manifest queue %s while the record waited for credit (last: %q)", ManifestQueue(runID), waiting)
	}
	id := runID
	mu.Unlock()
	if d, err := tgtAdmin.QueueDepth(ctx, tgt); err != nil || d != 0 {
		t.Errorf("the target holds %d messages (%v), want none: the record comes before what it describes", d, err)
	}
	onSource, err := srcAdmin.QueueDepth(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	staged, err := srcAdmin.QueueDepth(ctx, StagingQueue(id))
	if err != nil {
		t.Fatal(err)
	}
	if onSource+staged != n {
		t.Errorf("source %d and staging %d hold %d messages, want all %d", onSource, staged, onSource+staged, n)
	}

	res, err = moveAfterAKill(t, env, spec)
	if err != nil {
		t.Fatalf("the next apply: %v", err)
	}
	if res.RunID != id || !res.Resumed {
		t.Errorf("the next apply ran %s (resumed %v), not the stopped run %s", res.RunID, res.Resumed, id)
	}
	transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
	checkNoStaging(t, ctx, srcAdmin, id)
}
