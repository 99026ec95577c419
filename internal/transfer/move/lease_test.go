package move

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// TestLease_FenceStopsAProcessWhoseLeaseAnotherProcessTook: a process whose lease connection
// dropped (the broker drops the connection of a process paused past its TTL) while another
// process took the run must not delete the run's queues; one whose connection dropped with
// nobody else on the run takes its lease again and goes on; a run whose manifest queue is gone
// is lost too. Each case on the real source broker, with a run's queues made as a run makes them.
func TestLease_FenceStopsAProcessWhoseLeaseAnotherProcessTook(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 3*time.Minute)
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false)}}
	info, err := e.setup.Source.BrokerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newRun := func(t *testing.T, name string) string {
		t.Helper()
		runID := core.NewRunID(core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: name},
			Target: core.Endpoint{Broker: "target", Queue: name}}, time.Now())
		if err := createManifestQueue(ctx, e.setup.Source, runID); err != nil {
			t.Fatal(err)
		}
		if err := ensureStaging(ctx, e.setup.Source, info.Version, runID); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			_ = removeStaging(cleanup, e.setup.Source, nil, runID, core.Hooks{})
		})
		return runID
	}
	// droppedLease is a run whose lease this process took and then lost with its connection.
	droppedLease := func(t *testing.T, name string) (string, *runLease) {
		t.Helper()
		runID := newRun(t, name)
		l, err := e.holdLease(ctx, runID, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.release)
		_ = l.conn.Close()
		return runID, l
	}
	stagingExists := func(t *testing.T, runID string) bool {
		t.Helper()
		_, err := e.setup.Source.Queue(ctx, StagingQueue(runID))
		if err != nil && !errors.Is(err, artemis.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}

	t.Run("another process holds the lease now", func(t *testing.T) {
		runID, first := droppedLease(t, "lease.taken")
		second, err := e.holdLease(ctx, runID, "")
		if err != nil {
			t.Fatalf("a second process could not take the lease the first lost: %v", err)
		}
		defer second.release()
		err = removeStaging(ctx, e.setup.Source, first, runID, core.Hooks{})
		if !errors.Is(err, core.ErrLeaseLost) {
			t.Fatalf("removing staging with a lost lease: %v, want %v", err, core.ErrLeaseLost)
		}
		if !stagingExists(t, runID) {
			t.Error("the staging queue was deleted by a process that had lost the run's lease")
		}
		if err := second.fence(ctx); err != nil {
			t.Errorf("the process holding the lease: %v", err)
		}
	})

	// Every broker-side move of a run is fenced through the move itself, so the client checks the
	// lease before each attempt, its retries of a busy management lock included; and the relay
	// checks it before attaching to staging again after a lost connection.
	t.Run("a move and a relay's reattach after another process took the lease", func(t *testing.T) {
		runID, first := droppedLease(t, "lease.taken.move")
		second, err := e.holdLease(ctx, runID, "")
		if err != nil {
			t.Fatalf("a second process could not take the lease the first lost: %v", err)
		}
		defer second.release()
		admin := testenv.Client(t, env, "source", true)
		src := testenv.UniqueName("lease.taken.move.src")
		testenv.FixtureQueue(t, ctx, admin, src)
		transfertest.ProduceNumbered(t, ctx, admin, src, "m", 5)
		n, err := moveUncut(ctx, e.setup.Source, first, artemis.MoveRequest{Queue: src, TargetQueue: StagingQueue(runID), Count: 10})
		if !errors.Is(err, core.ErrLeaseLost) || n != 0 {
			t.Fatalf("a staging move with a lost lease: %d moved, %v; want none moved and %v", n, err, core.ErrLeaseLost)
		}
		if got := transfertest.QueueDepth(t, ctx, admin, src); got != 5 {
			t.Errorf("the source holds %d messages after the fenced move, want all 5", got)
		}
		if got := transfertest.QueueDepth(t, ctx, admin, StagingQueue(runID)); got != 0 {
			t.Errorf("staging holds %d messages moved by a process without the lease", got)
		}
		r := &runner{lease: first}
		if err := r.reattach(ctx, 1); !errors.Is(err, core.ErrLeaseLost) {
			t.Errorf("the relay's reattach with a lost lease: %v, want %v", err, core.ErrLeaseLost)
		}
		if err := (&runner{lease: second}).reattach(ctx, 1); err != nil {
			t.Errorf("the relay's reattach of the process holding the lease: %v", err)
		}
	})

	t.Run("nobody took it", func(t *testing.T) {
		runID, l := droppedLease(t, "lease.retaken")
		if err := l.fence(ctx); err != nil {
			t.Fatalf("a lease lost with its connection and free again: %v, want it taken again", err)
		}
		q, err := e.setup.Source.Queue(ctx, ManifestQueue(runID))
		if err != nil {
			t.Fatal(err)
		}
		if q.ConsumerCount != 1 {
			t.Errorf("the manifest queue has %d consumers after the lease was taken again, want 1", q.ConsumerCount)
		}
		beside := &Mover{setup: &core.Setup{Source: e.setup.Source, Graces: gracesBesideALiveRun}}
		if _, err := beside.holdLease(context.Background(), runID, ""); !errors.Is(err, core.ErrRunBusy) {
			t.Errorf("another process after the lease was taken again: %v, want %v", err, core.ErrRunBusy)
		}
	})

	t.Run("the run was removed", func(t *testing.T) {
		runID, l := droppedLease(t, "lease.removed")
		if err := e.setup.Source.DestroyQueue(ctx, ManifestQueue(runID)); err != nil {
			t.Fatal(err)
		}
		if err := l.fence(ctx); !errors.Is(err, core.ErrLeaseLost) {
			t.Errorf("a lease whose manifest queue is gone: %v, want %v", err, core.ErrLeaseLost)
		}
	})
}

// TestReturn_CountsWhatWasRelayedUnderTheRunsLease: a return counts what earlier processes
// relayed (a walk of the staging queue, long on a deep one) holding the run's lease on the
// broker, so that no process resumes the run meanwhile. A run is stopped after its first staged
// chunk; while its return counts, a second process is refused the run; the return then puts
// every message back exactly once.
func TestReturn_CountsWhatWasRelayedUnderTheRunsLease(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "return.counting")
	const messages = 600
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "c", messages)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	setup := func() *core.Setup {
		return &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
			Options: core.Options{ChunkSize: 200, BatchSize: 50}}
	}
	mover := &Mover{setup: setup()}
	moveCtx, stop := context.WithCancel(ctx)
	var once sync.Once
	mover.setup.Hooks.AfterStageChunk = func() { once.Do(stop) }
	if _, err := mover.Move(moveCtx, spec); err == nil {
		t.Fatal("the move finished; it was to stop after its first staged chunk")
	}
	stop()
	returner := &Mover{setup: setup()}
	runs, err := returner.unfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	runID := runs[0].RunID
	var counted bool
	var other error
	returner.setup.Hooks.Reached = func(p core.Point) {
		if p != core.PointReturnCounting {
			return
		}
		counted = true
		l := &runLease{source: returner.setup.Source, runID: runID}
		if other = l.attach(ctx, 0); other == nil {
			l.release()
		}
	}
	if _, err := returner.Return(ctx, runID); err != nil {
		t.Fatal(err)
	}
	if !counted {
		t.Fatal("the return never reached the point where it counts what was relayed")
	}
	if !errors.Is(other, core.ErrRunBusy) {
		t.Errorf("another process while the return counted: %v, want it refused (%v)", other, core.ErrRunBusy)
	}
	onTarget := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	onSource := transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))
	t.Logf("%d on the target, %d on the source", len(onTarget), len(onSource))
	transfertest.CheckSameSet(t, want, append(onTarget, onSource...))
}

// TestLease_IsNotTakenOnAManifestQueueTheBrokerCreated: a process that takes the lease of a run
// whose manifest queue another process has just removed (a discard, the end of a return)
// attaches to a queue that is gone; the broker then creates an ordinary queue by that name,
// which admits any number of consumers. Such a lease would not be exclusive: it must be refused,
// and a second process must not hold the lease beside the first. Run for the transfer user with
// the run's staging address still there, for an administrator with nothing of the run left, and
// on an ordinary queue by the manifest queue's name.
func TestLease_IsNotTakenOnAManifestQueueTheBrokerCreated(t *testing.T) {
	env := testenv.Require(t)
	admin := testenv.Client(t, env, "source", true)
	info, err := admin.BrokerInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		asAdmin, keep bool // keep: the run's staging queue (and so its address) is still there
		ordinary      bool // an ordinary queue by the manifest queue's name, as the broker creates one
	}{{"transfer user, staging left", false, true, false}, {"administrator, nothing left", true, false, false},
		{"transfer user, an ordinary queue by that name", false, false, true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := transfertest.Ctx(t, 3*time.Minute)
			e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", c.asAdmin)}}
			name := testenv.UniqueName("lease.gone")
			runID := core.NewRunID(core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: name},
				Target: core.Endpoint{Broker: "target", Queue: name}}, time.Now())
			t.Cleanup(func() {
				cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				_ = removeStaging(cleanup, admin, nil, runID, core.Hooks{})
				_ = admin.DestroyQueue(cleanup, ManifestQueue(runID))
			})
			if c.keep {
				if err := ensureStaging(ctx, admin, info.Version, runID); err != nil {
					t.Fatal(err)
				}
				if err := admin.DestroyQueue(ctx, ManifestQueue(runID)); err != nil {
					t.Fatal(err)
				}
			}
			if c.ordinary {
				if err := admin.CreateQueue(ctx, artemis.QueueSpec{Name: ManifestQueue(runID), Address: StagingQueue(runID), RoutingType: "ANYCAST",
					Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
					t.Fatal(err)
				}
			}
			first, firstErr := e.holdLease(ctx, runID, "")
			if firstErr == nil {
				defer first.release()
			}
			if q, err := admin.Queue(ctx, ManifestQueue(runID)); err == nil {
				t.Logf("after the attach, the broker holds %s: max-consumers %d, last-value %v, durable %v", q.Name, q.MaxConsumers, q.IsLastValue(), q.Durable)
			}
			second, secondErr := e.holdLease(ctx, runID, "")
			if secondErr == nil {
				defer second.release()
			}
			t.Logf("first lease: %v; second lease: %v", firstErr, secondErr)
			if firstErr == nil && secondErr == nil {
				t.Fatal("two processes hold the lease of one run at once")
			}
			if firstErr == nil {
				t.Errorf("a lease was taken on a manifest queue the broker created")
			}
			if !errors.Is(firstErr, core.ErrLeaseLost) {
				t.Errorf("the refusal does not say the lease is lost: %v", firstErr)
			}
		})
	}
}
