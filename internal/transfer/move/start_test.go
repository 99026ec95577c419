package move

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// startKill is one kill of a move's process at an exact instant of its start or end.
type startKill struct {
	point string // a core.Point, or "stage" (after a staging chunk)
	at    int64
	// consumeManifest consumes the run's records after the kill, as an operator with the
	// broker's CLI did in the reproduction (and as a kill between the queues and the
	// manifest left a run before the manifest came first).
	consumeManifest bool
}

const startKillMessages = 300

// gracesAfterAKill are the graces of the next apply after a test killed a run's process itself:
// no process can still be creating the run, so there is no start grace to wait out; a consumer
// of the dead process is still waited for until the broker drops it.
var gracesAfterAKill = core.Graces{Start: time.Nanosecond}

// killMoveAt runs a move of a fresh queue pair in a child process killed as k says and
// returns what the parent needs to finish it: the spec, the source messages and admin clients.
func killMoveAt(t *testing.T, env *testenv.Env, k startKill) (spec core.Spec, want []string, srcAdmin, tgtAdmin *artemis.Client, tgt string) {
	t.Helper()
	ctx := transfertest.Ctx(t, 3*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "start.kill")
	want = transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "k", startKillMessages)
	spec = transfertest.MoveSpec(t, srcAdmin, src, tgt)
	plan := transfertest.CrashPlan{Spec: spec, Point: k.point, At: k.at, Chunk: 100, Batch: 50, Source: "source", Target: "target"}
	if !transfertest.RunCrashingChild(t, plan) {
		t.Fatalf("the move was not killed at %s %d: it finished first", k.point, k.at)
	}
	if k.consumeManifest {
		queues, err := srcAdmin.ListQueues(ctx, core.StagingPrefix+spec.Key()+"-")
		if err != nil {
			t.Fatal(err)
		}
		consumed := 0
		for _, q := range queues {
			if id, ok := runIDOfManifestQueue(q.Name); ok {
				consumed += len(transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(StagingQueue(id), q.Name)))
			}
		}
		if consumed == 0 {
			t.Fatal("the killed run left no record to consume")
		}
	}
	return spec, want, srcAdmin, tgtAdmin, tgt
}

// checkMovedExactly checks that the target holds every source message once, the source none,
// and that no queue of any run of spec is left on the source broker.
func checkMovedExactly(t *testing.T, spec core.Spec, want []string, srcAdmin, tgtAdmin *artemis.Client, tgt string) {
	t.Helper()
	ctx := transfertest.Ctx(t, 3*time.Minute)
	got := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	transfertest.CheckSameSet(t, want, got)
	if d := transfertest.QueueDepth(t, ctx, srcAdmin, spec.Source.Queue); d != 0 {
		t.Errorf("the source still holds %d messages", d)
	}
	left, err := srcAdmin.ListQueues(ctx, core.StagingPrefix+spec.Key()+"-")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range left {
		t.Errorf("queue %s of a run is left on the source (%d messages)", q.Name, q.MessageCount)
	}
}

// TestMove_NextApplyCompletesAfterKillAtEachStartAndEndInstant kills a move's process at each
// step of creating its run and of removing it once finished, then runs the same move again, as
// the next terraform apply does: it resumes or cleanly restarts the run, with no other step,
// and every message arrives once.
func TestMove_NextApplyCompletesAfterKillAtEachStartAndEndInstant(t *testing.T) {
	env := testenv.Require(t)
	kills := []startKill{
		{point: string(core.PointManifestQueue), at: 1},
		{point: string(core.PointManifestWritten), at: 1},
		{point: string(core.PointStagingCreated), at: 1},
		{point: "stage", at: 1}, // the first staging chunk
		{point: string(core.PointStagingRemoved), at: 1},
		{point: string(core.PointSettingsRemoved), at: 1},
	}
	for _, k := range kills {
		t.Run(k.point, func(t *testing.T) {
			spec, want, srcAdmin, tgtAdmin, tgt := killMoveAt(t, env, k)
			res, err := moveAfterAKill(t, env, spec)
			if err != nil {
				t.Fatalf("the next apply after a kill at %s: %v", k.point, err)
			}
			t.Logf("kill at %s: the next run %s (resumed %v) relayed %d", k.point, res.RunID, res.Resumed, res.Relayed)
			checkMovedExactly(t, spec, want, srcAdmin, tgtAdmin, tgt)
		})
	}
}

// TestMove_NextApplyCompletesAfterManifestRecordConsumed is the reproduction: the
// move is killed once its run's queues exist, and the record on its manifest queue is consumed
// (the state a kill between the queues and the manifest left). Every later apply failed with
// "no manifest"; now the next one finishes the move exactly, with nothing staged (the run is
// removed and started again) and with a staged chunk (the manifest is written again from the
// run's id and the configuration).
func TestMove_NextApplyCompletesAfterManifestRecordConsumed(t *testing.T) {
	env := testenv.Require(t)
	for _, k := range []startKill{
		{point: string(core.PointStagingCreated), at: 1, consumeManifest: true},
		{point: "stage", at: 1, consumeManifest: true},
	} {
		t.Run(k.point, func(t *testing.T) {
			spec, want, srcAdmin, tgtAdmin, tgt := killMoveAt(t, env, k)
			res, err := moveAfterAKill(t, env, spec)
			if err != nil {
				t.Fatalf("the next apply: %v", err)
			}
			t.Logf("run %s (resumed %v) relayed %d", res.RunID, res.Resumed, res.Relayed)
			checkMovedExactly(t, spec, want, srcAdmin, tgtAdmin, tgt)
		})
	}
}

// TestOrphans_ListsAndReturnsARunKilledBeforeItsStagingQueue: a run killed before its staging
// queue exists has only its manifest queue; with its configuration gone, nothing would apply it
// again, so artemis_orphaned_transfers must list it and a return remove it, the source untouched.
func TestOrphans_ListsAndReturnsARunKilledBeforeItsStagingQueue(t *testing.T) {
	env := testenv.Require(t)
	for _, point := range []core.Point{core.PointManifestQueue, core.PointManifestWritten} {
		t.Run(string(point), func(t *testing.T) {
			spec, want, srcAdmin, _, _ := killMoveAt(t, env, startKill{point: string(point), at: 1})
			ctx := transfertest.Ctx(t, 3*time.Minute)
			e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
			runs, err := e.unfinishedRuns(ctx, &spec)
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs %+v %v", runs, err)
			}
			o := findOrphan(t, ctx, e, runs[0].RunID)
			if o == nil {
				t.Fatalf("run %s, killed at %s, is not listed as orphaned", runs[0].RunID, point)
			}
			if o.Messages != 0 || (o.Manifest != nil) != (point == core.PointManifestWritten) {
				t.Errorf("orphan %+v: want no message, and a manifest only once it was written", o)
			}
			if _, err := e.ReturnOrphan(ctx, o.RunID); err != nil {
				t.Fatal(err)
			}
			transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(spec.Source.Queue, spec.Source.Queue)))
			checkNoStaging(t, ctx, srcAdmin, o.RunID)
			if _, err := srcAdmin.Queue(ctx, QuarantineQueue(o.RunID)); err == nil {
				t.Errorf("quarantine queue of %s left", o.RunID)
			}
		})
	}
}

// TestMove_WithLedgerNextApplyCompletesAfterKillAtStartInstants: with a ledger, a run killed as
// it starts holds the ledger's lease too (its process is gone); the next apply takes the lease
// over and removes and restarts the run (nothing staged, no manifest: recorded as failed) or
// resumes it (its manifest written: completed), every message once.
func TestMove_WithLedgerNextApplyCompletesAfterKillAtStartInstants(t *testing.T) {
	for _, c := range []struct {
		point core.Point
		want  ledger.Status
	}{
		{core.PointManifestQueue, ledger.StatusFailed},
		{core.PointStagingCreated, ledger.StatusCompleted},
	} {
		t.Run(string(c.point), func(t *testing.T) {
			ctx := transfertest.Ctx(t, 5*time.Minute)
			const n = 500
			f := newLedgerFixture(t, ctx, "ledger.startkill", n)
			t.Cleanup(func() { transfertest.RemoveRunsOf(t, f.srcAdmin, f.spec) })
			raw, _ := json.Marshal(fencePlan{Spec: f.spec, DSN: f.dsn, HoldPoint: string(c.point)})
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLedgerFenceChild$", "-test.v")
			cmd.Env = append(os.Environ(), fenceChildEnv+"="+string(raw))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			held := false
			for !held && lines.Scan() {
				held = lines.Text() == "held"
			}
			_ = cmd.Process.Kill() // SIGKILL, at the point
			_ = cmd.Wait()
			if !held {
				t.Fatalf("the child never reached %s:\n%s", c.point, stderr.String())
			}
			runs, err := (&Mover{setup: &core.Setup{Source: testenv.Client(t, f.env, "source", false)}}).unfinishedRuns(ctx, &f.spec)
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs %+v %v", runs, err)
			}
			killed := runs[0].RunID
			next := f.engine(t, &transfertest.Book{Ledger: f.ledger}, core.Options{})
			next.setup.Graces = gracesAfterAKill
			res, err := next.Move(ctx, f.spec)
			if err != nil {
				t.Fatalf("the next apply: %v", err)
			}
			t.Logf("killed run %s; the next apply's run %s (resumed %v) relayed %d", killed, res.RunID, res.Resumed, res.Relayed)
			transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.spec.Target.Queue, f.spec.Target.Queue)))
			run, err := f.ledger.GetRun(ctx, killed)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != c.want {
				t.Errorf("the killed run %s is %q in the ledger, want %q", killed, run.Status, c.want)
			}
			checkNoStaging(t, ctx, f.srcAdmin, killed)
		})
	}
}
