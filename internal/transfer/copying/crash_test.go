package copying

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// killingBook is a copyLedger that runs afterRecord after each batch it recorded.
type killingBook struct {
	testBook
	afterRecord func()
}

func (b *killingBook) RecordCopied(ctx context.Context, runID, holder string, ids []int64) error {
	err := b.testBook.RecordCopied(ctx, runID, holder, ids)
	if err == nil && b.afterRecord != nil {
		b.afterRecord()
	}
	return err
}

// TestCopyChildProcess is the copy child; without a plan it does nothing.
func TestCopyChildProcess(t *testing.T) {
	raw := os.Getenv(copyChildPlanEnv)
	if raw == "" {
		t.Skip("runs only as the child process of the copy fault tests")
	}
	var plan copyPlan
	if err := json.Unmarshal([]byte(raw), &plan); err != nil {
		t.Fatal(err)
	}
	env := testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := ledger.Open(ctx, plan.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var count atomic.Int64
	die := func() {
		if count.Add(1) == plan.At {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute) // the signal is on its way
		}
	}
	book := &killingBook{testBook: testBook{&transfertest.Book{Ledger: l}}}
	e := &Copier{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Options: core.Options{BatchSize: plan.Batch, CopyIdleTimeout: 3 * time.Second}, Bookkeeper: book}}
	var paused atomic.Bool
	e.setup.Hooks.BeforeSend = func() {
		if plan.Pause > 0 && paused.CompareAndSwap(false, true) {
			time.Sleep(plan.Pause)
		}
		if plan.Point == "send" {
			die()
		}
	}
	switch plan.Point {
	case "confirm":
		e.setup.Hooks.AfterConfirm = die
	case "record":
		book.afterRecord = die
	}
	var out copyChildResult
	if plan.RunID != "" {
		out.Result, err = e.resumeCopyByID(ctx, plan.RunID, plan.Spec, e.setup.Hooks)
	} else {
		out.Result, err = e.Copy(ctx, plan.Spec)
	}
	if err != nil {
		out.Err = err.Error()
	}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				out.PeakRSSKiB, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			}
		}
	}
	raw2, _ := json.Marshal(out)
	fmt.Println(copyChildResultPrefix + string(raw2))
}

func TestCopy_SurvivesSIGKILLAtSeededPointsAndResumesExactly(t *testing.T) {
	testenv.Require(t)
	iterations, seed, rng := transfertest.CrashRounds(t, 12, 3)
	points := []string{"send", "confirm", "record"}
	ctx := transfertest.Ctx(t, 30*time.Minute)
	const messages = 1000
	killed := map[string]int{}
	kills := 0
	for i := 0; i < iterations; i++ {
		f := newCopyFixture(t, ctx, fmt.Sprintf("copycrash%d", i), messages, i%2 == 0)
		before := sourceSnapshot(t, ctx, f.srcAdmin, f.src)
		crashes := 1 + rng.Intn(2)
		runID, finished := "", false
		for c := 0; c < crashes && !finished; c++ {
			plan := copyPlan{Spec: f.spec, DSN: f.dsn, Point: points[rng.Intn(len(points))], Batch: 20 + rng.Intn(130)}
			switch plan.Point {
			case "record":
				plan.At = 1 + int64(rng.Intn(messages/plan.Batch))
			default:
				plan.At = 1 + int64(rng.Intn(messages))
			}
			res := runCopyChild(t, plan)
			t.Logf("iteration %d crash %d: %s at %d (batch %d): %s", i, c, plan.Point, plan.At, plan.Batch, map[bool]string{true: "killed", false: "finished first"}[res.Err == "killed"])
			if res.Err == "killed" {
				killed[plan.Point]++
				kills++
			} else if res.Err != "" {
				t.Fatalf("iteration %d: child failed: %s", i, res.Err)
			} else {
				finished = true // the child copied everything before its kill point
			}
			runs, err := f.ledger.ListRuns(ctx, ledger.RunFilter{SourceQueue: f.src})
			if err != nil || len(runs) != 1 {
				t.Fatalf("iteration %d: runs %v, %v; want one copy run", i, runs, err)
			}
			runID = runs[0].ID
			// The killed process still holds the run's lease (it lapses leaseTTL after its
			// last renewal). The next process sees that its holder has ended (the killed
			// process's ledger session is gone) and takes the run over at once: no waiting.
		}
		if !finished {
			res, err := f.engine(t, core.Options{BatchSize: 100, CopyIdleTimeout: 3 * time.Second}).Copy(ctx, f.spec)
			if err != nil {
				t.Fatalf("iteration %d: resume: %v", i, err)
			}
			if res.RunID != runID || !res.Resumed || res.RelayedTotal != messages {
				t.Errorf("iteration %d: the resume %+v, want run %s resumed with %d copied in all", i, res, runID, messages)
			}
		}
		transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
		checkSameSnapshot(t, before, sourceSnapshot(t, ctx, f.srcAdmin, f.src))
		checkCopyRun(t, ctx, f.ledger, runID, messages)
	}
	t.Logf("%d kills by point: %v", kills, killed)
	if kills < 10 && iterations >= 12 {
		t.Errorf("only %d of the crashes killed the process before it finished (seed %d): want at least 10", kills, seed)
	}
}

func TestCopy_PostgreSQLStoppedMidCopyAndRestartedTheRunCompletesExactly(t *testing.T) {
	env := testenv.RequireOwned(t)
	ctx := transfertest.Ctx(t, 15*time.Minute)
	f := newCopyFixture(t, ctx, "copypg", 3000, false)
	before := sourceSnapshot(t, ctx, f.srcAdmin, f.src)
	e := f.engine(t, core.Options{BatchSize: 100})
	// waiting is closed when the run first reports that it waits for the ledger: PostgreSQL is
	// started again on that event, not after a fixed time, so the outage always spans a write
	// the run had to wait for, however fast or slow the machine.
	waiting, copied := make(chan struct{}), make(chan struct{})
	var waited atomic.Bool
	e.setup.Options.Progress = func(p core.Progress) {
		if strings.Contains(p.Waiting, "ledger") && waited.CompareAndSwap(false, true) {
			close(waiting)
		}
	}
	var sent atomic.Int64
	outage := make(chan error, 1)
	e.setup.Hooks.BeforeSend = func() {
		if sent.Add(1) != 1200 {
			return
		}
		// Stopped from inside the run, at a precise point; started again once the run waits to
		// record a batch.
		if err := env.StopPostgres(); err != nil {
			outage <- err
			return
		}
		go func() {
			select {
			case <-waiting:
			case <-copied: // the copy ended without waiting: the checks below say how
			case <-ctx.Done():
			}
			outage <- env.StartPostgres()
		}()
	}
	t.Cleanup(func() { _ = env.StartPostgres() })
	started := time.Now()
	res, err := e.Copy(ctx, f.spec)
	close(copied)
	if sent.Load() < 1200 {
		t.Fatalf("the copy sent %d messages, fewer than the 1,200 at which PostgreSQL is stopped: %v", sent.Load(), err)
	}
	if oerr := <-outage; oerr != nil {
		t.Fatalf("stopping or starting PostgreSQL: %v", oerr)
	}
	if err != nil {
		t.Fatalf("the copy across the outage: %v", err)
	}
	t.Logf("copied %d across a PostgreSQL outage in %s", res.Relayed, time.Since(started).Round(time.Millisecond))
	if !waited.Load() {
		t.Error("the run never reported waiting for the ledger")
	}
	if res.Relayed != 3000 {
		t.Errorf("result %+v, want 3000 copied", res)
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	checkSameSnapshot(t, before, sourceSnapshot(t, ctx, f.srcAdmin, f.src))
	checkCopyRun(t, ctx, f.ledger, res.RunID, 3000)
}
