package copying

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

func TestCopy_TwoProcessesOnTheSameRunOneRunsAndTheOtherIsRefusedNamingTheHolder(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	f := newCopyFixture(t, ctx, "copytwo", 2000, false)
	// The first process stops mid-copy; the run is then resumed by two processes at once.
	stopCtx, stop := context.WithCancel(ctx)
	sent := 0
	first := f.engine(t, core.Options{BatchSize: 100})
	first.setup.Hooks.BeforeSend = func() {
		if sent++; sent == 700 {
			stop()
		}
	}
	stopped, err := first.Copy(stopCtx, f.spec)
	if !errors.Is(err, core.ErrInterrupted) {
		t.Fatalf("the stopped copy: %v, want ErrInterrupted", err)
	}
	// Each in a child process of its own, as two applies on two machines would be.
	var wg sync.WaitGroup
	outs := make([]copyChildResult, 2)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// The one that takes the lease holds it for 10 s before its first send, so the other
			// meets it held whatever the order they reach the ledger in.
			outs[i] = runCopyChild(t, copyPlan{Spec: f.spec, DSN: f.dsn, RunID: stopped.RunID, Batch: 50, Point: "none", Pause: 10 * time.Second})
		}(i)
	}
	wg.Wait()
	var ran, refused int
	for _, o := range outs {
		switch {
		case o.Err == "":
			ran++
		case strings.Contains(o.Err, "is being worked on by") && strings.Contains(o.Err, "since"):
			refused++
			t.Logf("refused: %s", o.Err)
		default:
			t.Errorf("a child failed otherwise: %s", o.Err)
		}
	}
	if ran != 1 || refused != 1 {
		t.Fatalf("%d children ran the copy and %d were refused, want one each", ran, refused)
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	runs, err := f.ledger.ListRuns(ctx, ledger.RunFilter{SourceQueue: f.src})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v; want the one copy", runs, err)
	}
	checkCopyRun(t, ctx, f.ledger, runs[0].ID, 2000)
}

func TestAbandonCopy_EndsTheRunInTheLedgerAndANewCopyStartsAfresh(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	f := newCopyFixture(t, ctx, "copyabandon", 500, false)
	stopCtx, stop := context.WithCancel(ctx)
	sent := 0
	e := f.engine(t, core.Options{BatchSize: 50})
	e.setup.Hooks.BeforeSend = func() {
		if sent++; sent == 120 {
			stop()
		}
	}
	res, err := e.Copy(stopCtx, f.spec)
	if !errors.Is(err, core.ErrInterrupted) {
		t.Fatalf("the stopped copy: %v, want ErrInterrupted", err)
	}
	e = f.engine(t, core.Options{BatchSize: 50})
	run, err := e.UnfinishedCopy(ctx, res.RunID)
	if err != nil || run.Status != string(ledger.StatusInterrupted) || run.Copied == 0 || run.Holder != "" ||
		run.Source.Queue != f.spec.Source.Queue || run.Target.Queue != f.spec.Target.Queue {
		t.Fatalf("UnfinishedCopy = %+v, %v; want the interrupted run of the spec's queues, some copied, no holder", run, err)
	}
	if err := e.abandonCopy(ctx, res.RunID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.UnfinishedCopy(ctx, res.RunID); !errors.Is(err, core.ErrNoSuchRun) {
		t.Fatalf("UnfinishedCopy of an abandoned run: %v, want ErrNoSuchRun", err)
	}
	if _, err := e.resumeCopyByID(ctx, res.RunID, f.spec, e.setup.Hooks); !errors.Is(err, core.ErrNoSuchRun) {
		t.Fatalf("ResumeCopy of an abandoned run: %v, want ErrNoSuchRun", err)
	}
	if err := e.abandonCopy(ctx, res.RunID); err != nil {
		t.Fatalf("abandoning it again: %v, want nil", err)
	}
	if kinds := transfertest.EventKinds(t, ctx, f.ledger, res.RunID); kinds[len(kinds)-1] != "abandoned" {
		t.Errorf("the run's events end with %v, want abandoned", kinds)
	}
	other := f.spec
	other.Selection.Filter = "n >= 0"
	if _, err := e.resumeCopyByID(ctx, res.RunID, other, e.setup.Hooks); err == nil || !strings.Contains(err.Error(), "is not a copy of") {
		t.Errorf("ResumeCopy with another spec: %v", err)
	}
	next, err := e.Copy(ctx, f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if next.RunID == res.RunID || next.Resumed || next.Relayed != 500 {
		t.Errorf("the copy after the abandoned one: %+v, want a new run copying all 500", next)
	}
	// The target holds what the abandoned run copied, and the new run's full copy.
	if d := transfertest.QueueDepth(t, ctx, f.tgtAdmin, f.tgt); d != 500+run.Copied {
		t.Errorf("target holds %d, want %d", d, 500+run.Copied)
	}
}

func TestCopy_TheSameCopyStartedByTwoProcessesAtTheSameMomentIsCopiedOnceAndBothReportIt(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	f := newCopyFixture(t, ctx, "copyrace", 1000, false)
	// Both processes have looked for an unfinished copy of the transfer, found none and passed
	// their preflight before either records its run: the instant two applies at once meet.
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	engines := []*Copier{f.engine(t, core.Options{BatchSize: 100}), f.engine(t, core.Options{BatchSize: 100})}
	for _, e := range engines {
		e.beforeRecording = func() {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	}
	go func() {
		for range engines {
			select {
			case <-arrived:
			case <-ctx.Done():
				return
			}
		}
		close(release)
	}()
	results := make([]core.Result, len(engines))
	errs := make([]error, len(engines))
	var wg sync.WaitGroup
	for i, e := range engines {
		wg.Add(1)
		go func(i int, e *Copier) {
			defer wg.Done()
			results[i], errs[i] = e.Copy(ctx, f.spec)
		}(i, e)
	}
	wg.Wait()
	// Neither fails: the process that recorded the run copies, and the other waits for that copy
	// (or resumes it) and returns its result. One run, each message once.
	var joined int
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		if results[i].Relayed == 0 {
			joined++
		}
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	runs, err := f.ledger.ListRuns(ctx, ledger.RunFilter{SourceQueue: f.src})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || results[0].RunID != runs[0].ID || results[1].RunID != runs[0].ID {
		t.Fatalf("%d runs in the ledger, and the processes report runs %s and %s; want one run both report", len(runs), results[0].RunID, results[1].RunID)
	}
	if joined != 1 || results[0].RelayedTotal != 1000 || results[1].RelayedTotal != 1000 {
		t.Fatalf("results %+v and %+v: want one process that copied and one that joined it, both reporting the 1000 copied", results[0], results[1])
	}
	checkCopyRun(t, ctx, f.ledger, runs[0].ID, 1000)
}

// An apply that finds the copy of its transfer unfinished and held by another apply's live
// process (which recorded it after this apply's look-up at plan: the fault harness met this on
// a loaded machine) waits for that copy and completes with it. Refused, its operator's next
// apply found the copy finished and copied the whole transfer a second time.
func TestCopy_AnApplyThatFindsTheCopyRunningWaitsForItAndReportsIt(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	const n = 1000
	f := newCopyFixture(t, ctx, "copyheld", n, false)
	first, second := f.engine(t, core.Options{BatchSize: 100}), f.engine(t, core.Options{BatchSize: 100})
	holding, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	first.setup.Hooks.AfterConfirm = func() {
		once.Do(func() {
			close(holding)
			select {
			case <-release:
			case <-ctx.Done():
			}
		})
	}
	type outcome struct {
		res core.Result
		err error
	}
	firstDone, secondDone := make(chan outcome, 1), make(chan outcome, 1)
	go func() {
		res, err := first.Copy(ctx, f.spec)
		firstDone <- outcome{res, err}
	}()
	select {
	case <-holding:
	case o := <-firstDone:
		t.Fatalf("the first copy ended before it was held: %+v %v", o.res, o.err)
	}
	go func() {
		res, err := second.Copy(ctx, f.spec)
		secondDone <- outcome{res, err}
	}()
	// The second apply is still waiting a few seconds on: it neither failed nor copied.
	select {
	case o := <-secondDone:
		close(release)
		t.Fatalf("the second apply ended while the first held the copy: %+v %v; want it to wait", o.res, o.err)
	case <-time.After(3 * joinPoll):
	}
	close(release)
	a, b := <-firstDone, <-secondDone
	if a.err != nil || b.err != nil {
		t.Fatalf("first: %v; second: %v", a.err, b.err)
	}
	if b.res.RunID != a.res.RunID || b.res.Relayed != 0 || b.res.RelayedTotal != n || a.res.RelayedTotal != n {
		t.Fatalf("first %+v, second %+v: want the second to report the first's run, %d copied, none by itself", a.res, b.res, n)
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	runs, err := f.ledger.ListRuns(ctx, ledger.RunFilter{SourceQueue: f.src})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs in the ledger, want 1", len(runs))
	}
}

// Two containers given the same host name each see the other's pids as not running: a lease
// holder's liveness cannot be read from its host name and pid. The ledger session of the
// holder's process is what tells.
func TestBook_ALiveHolderInAnotherContainerWithTheSameHostNameKeepsItsLeaseUntilItsProcessEnds(t *testing.T) {
	ctx := transfertest.Ctx(t, 2*time.Minute)
	env := testenv.Require(t)
	dsn := transfertest.LedgerDSN(t, env)
	other, here := testenv.OpenLedger(t, dsn), testenv.OpenLedger(t, dsn)
	run := ledger.Run{ID: "r", Fingerprint: "fp", Mode: ledger.ModeCopy, SourceBroker: "source", SourceQueue: "q",
		TargetBroker: "target", TargetQueue: "q", T0: time.Now()}
	if err := other.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	// The other container's process: this host's name, and a pid that runs nowhere here.
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	otherHolder := fmt.Sprintf("%s:%d:%s", host, ended.Process.Pid, "0c0ffee0")
	if _, err := other.TakeLease(ctx, run.ID, otherHolder, time.Hour); err != nil {
		t.Fatal(err)
	}
	book := core.NewBook(testBook{&transfertest.Book{Ledger: here}}, run.ID, 5*time.Second)
	var held *ledger.LeaseHeldError
	if err := book.TakeLease(ctx); !errors.As(err, &held) || held.Holder != otherHolder {
		t.Fatalf("taking the lease from a live holder in another container: %v; want it refused naming %s", err, otherHolder)
	}
	// The other process ends: its lease, an hour from lapsing, is taken over at once.
	other.Close()
	if err := book.TakeLease(ctx); err != nil {
		t.Fatalf("taking the lease once its holder's process ended: %v", err)
	}
	got, err := here.GetRun(ctx, run.ID)
	if err != nil || got.Lease == nil || got.Lease.Holder != book.Holder {
		t.Fatalf("run after the takeover: %+v, %v; want its lease held by %s", got.Lease, err, book.Holder)
	}
}
