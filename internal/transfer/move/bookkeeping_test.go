package move

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// checkRun checks a run's status, counters and lease in the ledger.
func checkRun(t *testing.T, ctx context.Context, l *ledger.Ledger, runID string, status ledger.Status, want ledger.Counters) {
	t.Helper()
	run, err := l.GetRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != status {
		t.Errorf("run status %s, want %s", run.Status, status)
	}
	if run.Counters != want {
		t.Errorf("run counters %+v, want %+v", run.Counters, want)
	}
	if run.Lease != nil {
		t.Errorf("lease still held by %s after the run ended", run.Lease.Holder)
	}
}

func TestMove_WithLedgerRecordsTheRunBeforeStagingAndCountsExactly(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n = 2000
	f := newLedgerFixture(t, ctx, "ledger.move", n)
	var created atomic.Bool
	book := &transfertest.Book{Ledger: f.ledger, BeforeCreate: func(r core.BookedRun) {
		// Nothing has moved when the run is recorded: the source is whole, and no staging exists.
		created.Store(true)
		if d := transfertest.QueueDepth(t, ctx, f.srcAdmin, f.spec.Source.Queue); d != n {
			t.Errorf("the source held %d of %d messages when the run was recorded", d, n)
		}
		if _, err := f.srcAdmin.Queue(ctx, StagingQueue(r.ID)); !errors.Is(err, artemis.ErrNotFound) {
			t.Errorf("staging queue of run %s existed before the run was recorded (err %v)", r.ID, err)
		}
	}}
	var staged atomic.Int32
	e := f.engine(t, book, core.Options{})
	e.setup.Hooks.AfterStageChunk = func() {
		if staged.Add(1) == 1 && !created.Load() {
			t.Error("the first staging move came before the run was recorded")
		}
	}
	res, err := e.Move(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Relayed != n {
		t.Errorf("result %+v", res)
	}
	checkRun(t, ctx, f.ledger, res.RunID, ledger.StatusCompleted, ledger.Counters{Staged: n, Relayed: n, Resent: res.Resent})
	if got := strings.Join(transfertest.EventKinds(t, ctx, f.ledger, res.RunID), ","); got != "created,lease-taken,completed" {
		t.Errorf("events %s", got)
	}
	run, _ := f.ledger.GetRun(ctx, res.RunID)
	if run.Fingerprint != f.spec.Key() || run.SourceQueue != f.spec.Source.Queue || run.TargetQueue != f.spec.Target.Queue || !run.T0.Equal(res.T0) {
		t.Errorf("recorded run %+v", run)
	}
	f.checkMovedExactly(ctx, t, res.RunID)
}

func TestMove_WithLedgerInterruptedThenResumedRecordsBothAndCountsExactly(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n, stopAt = 2000, 700
	f := newLedgerFixture(t, ctx, "ledger.resume", n)
	book := &transfertest.Book{Ledger: f.ledger}
	first := moveInterruptedAfter(ctx, t, f.engine(t, book, core.Options{}), f.spec, stopAt)
	checkRun(t, ctx, f.ledger, first.RunID, ledger.StatusInterrupted,
		ledger.Counters{Staged: first.Staged, Relayed: first.Relayed, Resent: first.Resent})

	second, err := f.engine(t, book, core.Options{}).Move(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if second.RunID != first.RunID || !second.Resumed {
		t.Fatalf("second move ran %s (resumed %v), want a resume of %s", second.RunID, second.Resumed, first.RunID)
	}
	// Each process counts what it relayed; a message whose acknowledgement the stopping
	// process lost is counted by both, so only the run's total must be exact.
	t.Logf("relayed %d then %d, total %d; resent %d then %d", first.Relayed, second.Relayed, second.RelayedTotal, first.Resent, second.Resent)
	if second.RelayedTotal != n {
		t.Errorf("relayed %d in all, want %d", second.RelayedTotal, n)
	}
	checkRun(t, ctx, f.ledger, first.RunID, ledger.StatusCompleted,
		ledger.Counters{Staged: n, Relayed: n, Resent: first.Resent + second.Resent})
	got := strings.Join(transfertest.EventKinds(t, ctx, f.ledger, first.RunID), ",")
	if got != "created,lease-taken,interrupted,lease-taken,resumed,completed" {
		t.Errorf("events %s", got)
	}
	f.checkMovedExactly(ctx, t, first.RunID)
}

func TestMove_WithLedgerASecondProcessIsRefusedNamingTheHolder(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n, holdAt = 1000, 300
	f := newLedgerFixture(t, ctx, "ledger.fence", n)
	book := &transfertest.Book{Ledger: f.ledger}
	first := f.engine(t, book, core.Options{})
	held, resume := make(chan struct{}), make(chan struct{})
	var confirmed atomic.Int32
	first.setup.Hooks.AfterConfirm = func() {
		if confirmed.Add(1) == holdAt {
			close(held)
			<-resume
		}
	}
	var wg sync.WaitGroup
	var firstRes core.Result
	var firstErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		firstRes, firstErr = first.Move(ctx, f.spec)
	}()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the first move never reached its hold point")
	}
	_, err := f.engine(t, book, core.Options{}).Move(ctx, f.spec)
	close(resume)
	wg.Wait()
	var leaseHeld *ledger.LeaseHeldError
	if !errors.As(err, &leaseHeld) {
		t.Fatalf("second move: %v, want a refusal naming the lease holder", err)
	}
	if leaseHeld.Holder == "" || leaseHeld.Since.IsZero() || !strings.Contains(err.Error(), leaseHeld.Holder) ||
		!strings.Contains(err.Error(), leaseHeld.Since.UTC().Format(time.RFC3339)) {
		t.Errorf("refusal does not name the holder and since when: %v", err)
	}
	if firstErr != nil {
		t.Fatalf("first move: %v", firstErr)
	}
	checkRun(t, ctx, f.ledger, firstRes.RunID, ledger.StatusCompleted, ledger.Counters{Staged: n, Relayed: n, Resent: firstRes.Resent})
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.spec.Target.Queue, f.spec.Target.Queue)))
}

func TestMove_WithLedgerCutMidRunWaitsAndCompletesExactly(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n, cutAt = 2000, 600
	f := newLedgerFixture(t, ctx, "ledger.cut", n)
	u, err := url.Parse(f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	book := &transfertest.Book{Ledger: testenv.OpenLedger(t, u.String())}
	var waitedForLedger atomic.Bool
	e := f.engine(t, book, core.Options{Progress: func(p core.Progress) {
		if strings.Contains(p.Waiting, "transfer ledger") {
			waitedForLedger.Store(true)
		}
	}})
	var confirmed atomic.Int32
	e.setup.Hooks.AfterConfirm = func() {
		if confirmed.Add(1) == cutAt {
			// Longer than one ledger write may take, so the write after this batch fails at
			// least once and the run waits; far shorter than the retry budget.
			proxy.Stall(core.BookWriteTimeout + 2*time.Second)
			proxy.Cut()
		}
	}
	res, err := e.Move(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if !waitedForLedger.Load() {
		t.Error("the run never reported waiting for the ledger")
	}
	if res.RelayedTotal != n {
		t.Errorf("result %+v", res)
	}
	checkRun(t, ctx, f.ledger, res.RunID, ledger.StatusCompleted, ledger.Counters{Staged: n, Relayed: n, Resent: res.Resent})
	f.checkMovedExactly(ctx, t, res.RunID)
}

func TestReturn_WithLedgerRecordsTheReturnAndItsCounts(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n, stopAt = 1000, 300
	f := newLedgerFixture(t, ctx, "ledger.return", n)
	book := &transfertest.Book{Ledger: f.ledger}
	first := moveInterruptedAfter(ctx, t, f.engine(t, book, core.Options{}), f.spec, stopAt)
	ret, err := f.engine(t, book, core.Options{}).Return(ctx, first.RunID)
	if err != nil {
		t.Fatal(err)
	}
	relayed := ret.RelayedTotal
	t.Logf("relayed %d, then %d by the return (total %d, resent %d), returned %d", first.Relayed, ret.Relayed, relayed, ret.Resent, ret.Returned)
	if relayed+ret.Returned != n {
		t.Errorf("relayed %d and returned %d of %d", relayed, ret.Returned, n)
	}
	checkRun(t, ctx, f.ledger, first.RunID, ledger.StatusReturned,
		ledger.Counters{Staged: first.Staged, Relayed: relayed, Resent: first.Resent + ret.Resent, Returned: ret.Returned})
	got := strings.Join(transfertest.EventKinds(t, ctx, f.ledger, first.RunID), ",")
	if got != "created,lease-taken,interrupted,lease-taken,returned" {
		t.Errorf("events %s", got)
	}
	if src, tgt := transfertest.QueueDepth(t, ctx, f.srcAdmin, f.spec.Source.Queue), transfertest.QueueDepth(t, ctx, f.tgtAdmin, f.spec.Target.Queue); src != ret.Returned || tgt != relayed {
		t.Errorf("source holds %d and target %d; want %d returned and %d relayed", src, tgt, ret.Returned, relayed)
	}
	checkNoStaging(t, ctx, f.srcAdmin, first.RunID)
}

func TestMove_WithLedgerAwayLongerThanTheRetryBudgetStopsInterruptedAndResumesExactly(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n, cutAt = 1500, 500
	// The ledger is away for longer than the run's retry budget, and for less than the one
	// whole write a stopped run still gets to record that it was interrupted.
	const budget, away = time.Second, 4 * time.Second
	f := newLedgerFixture(t, ctx, "ledger.away", n)
	u, err := url.Parse(f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	book := &transfertest.Book{Ledger: testenv.OpenLedger(t, u.String())}
	e := f.engine(t, book, core.Options{RetryBudget: budget})
	var confirmed atomic.Int32
	e.setup.Hooks.AfterConfirm = func() {
		if confirmed.Add(1) == cutAt {
			proxy.Stall(away)
			proxy.Cut()
		}
	}
	first, err := e.Move(ctx, f.spec)
	if !errors.Is(err, core.ErrInterrupted) || !errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("move: %v, want interrupted because the ledger was unavailable", err)
	}
	t.Logf("first process: %v", err)
	checkRun(t, ctx, f.ledger, first.RunID, ledger.StatusInterrupted,
		ledger.Counters{Staged: first.Staged, Relayed: first.Relayed, Resent: first.Resent})

	second, err := f.engine(t, book, core.Options{}).Move(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if second.RunID != first.RunID || second.RelayedTotal != n {
		t.Errorf("relayed %d then %d (total %d) in runs %s and %s, want %d in one run", first.Relayed, second.Relayed,
			second.RelayedTotal, first.RunID, second.RunID, n)
	}
	checkRun(t, ctx, f.ledger, first.RunID, ledger.StatusCompleted,
		ledger.Counters{Staged: n, Relayed: n, Resent: first.Resent + second.Resent})
	f.checkMovedExactly(ctx, t, first.RunID)
}

// TestLedgerFenceChild is the child of TestMove_WithLedgerTwoProcessesOfTheSameRunOneIsRefused:
// it says "held" on stdout at its hold point, waits for a line on stdin, finishes the move and
// prints its result. It does nothing in a normal test run.
func TestLedgerFenceChild(t *testing.T) {
	raw := os.Getenv(fenceChildEnv)
	if raw == "" {
		t.Skip("runs only as the child of the two-process fencing test")
	}
	var plan fencePlan
	if err := json.Unmarshal([]byte(raw), &plan); err != nil {
		t.Fatal(err)
	}
	ctx := transfertest.Ctx(t, 4*time.Minute)
	env := testenv.Require(t)
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Options: core.Options{BatchSize: 100, ChunkSize: 500}, Bookkeeper: &transfertest.Book{Ledger: testenv.OpenLedger(t, plan.DSN)}}}
	hold := func() {
		fmt.Println("held")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	}
	var confirmed atomic.Int32
	e.setup.Hooks.AfterConfirm = func() {
		if confirmed.Add(1) == plan.HoldAt {
			hold()
		}
	}
	e.setup.Hooks.Reached = func(p core.Point) {
		if string(p) == plan.HoldPoint {
			hold()
		}
	}
	res, err := e.Move(ctx, plan.Spec)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res)
	fmt.Println("result " + string(out))
}

func TestMove_WithLedgerTwoProcessesOfTheSameRunOneIsRefused(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n = 1000
	f := newLedgerFixture(t, ctx, "ledger.fence2", n)
	raw, _ := json.Marshal(fencePlan{Spec: f.spec, DSN: f.dsn, HoldAt: 300})
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLedgerFenceChild$", "-test.v")
	cmd.Env = append(os.Environ(), fenceChildEnv+"="+string(raw))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var childOut []string
	held := false
	for !held && lines.Scan() {
		childOut = append(childOut, lines.Text())
		held = lines.Text() == "held"
	}
	if !held {
		_ = cmd.Wait()
		t.Fatalf("the child never reached its hold point:\n%s\n%s", strings.Join(childOut, "\n"), stderr.String())
	}

	// This process is the second apply of the same transfer: it finds the child's run and
	// must be refused by the ledger, naming the child as the holder.
	_, moveErr := f.engine(t, &transfertest.Book{Ledger: f.ledger}, core.Options{}).Move(ctx, f.spec)
	_, _ = io.WriteString(stdin, "go\n")
	_ = stdin.Close()
	for lines.Scan() {
		childOut = append(childOut, lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, strings.Join(childOut, "\n"), stderr.String())
	}
	var leaseHeld *ledger.LeaseHeldError
	if !errors.As(moveErr, &leaseHeld) {
		t.Fatalf("second process: %v, want a refusal naming the lease holder", moveErr)
	}
	t.Logf("second process refused: %v", moveErr)
	if !strings.Contains(leaseHeld.Holder, fmt.Sprintf(":%d:", cmd.Process.Pid)) || leaseHeld.Since.IsZero() ||
		!strings.Contains(moveErr.Error(), leaseHeld.Since.UTC().Format(time.RFC3339)) {
		t.Errorf("the refusal does not name the child (pid %d) and since when: %v", cmd.Process.Pid, moveErr)
	}
	var res core.Result
	for _, l := range childOut {
		if rest, ok := strings.CutPrefix(l, "result "); ok {
			if err := json.Unmarshal([]byte(rest), &res); err != nil {
				t.Fatal(err)
			}
		}
	}
	if res.RelayedTotal != n {
		t.Fatalf("child result %+v, want %d relayed", res, n)
	}
	checkRun(t, ctx, f.ledger, res.RunID, ledger.StatusCompleted, ledger.Counters{Staged: n, Relayed: n, Resent: res.Resent})
	if got := strings.Join(transfertest.EventKinds(t, ctx, f.ledger, res.RunID), ","); got != "created,lease-taken,completed" {
		t.Errorf("events %s: the refused process wrote to the run", got)
	}
	f.checkMovedExactly(ctx, t, res.RunID)
}
