package move

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// TestMove_SurvivesSIGKILLAtSeededPoints kills the relay process at random points — during
// staging, between send and confirm, between confirm and source ack — then resumes the run in
// another process, and checks the target holds every message exactly once.
func TestMove_SurvivesSIGKILLAtSeededPoints(t *testing.T) {
	env := testenv.Require(t)
	iterations, seed, rng := transfertest.CrashRounds(t, 20, 4)
	points := []string{"stage", "send", "confirm"}
	ctx := transfertest.Ctx(t, 15*time.Minute)
	srcAdmin, tgtAdmin := testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	const messages = 400
	killed := map[string]int{}
	for i := 0; i < iterations; i++ {
		src, tgt := testenv.UniqueName("crash.src"), testenv.UniqueName("crash.tgt")
		testenv.FixtureQueue(t, ctx, srcAdmin, src)
		testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
		want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, fmt.Sprintf("c%d", i), messages)
		spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)

		// One or two crashes, then a clean resume.
		crashes := 1 + rng.Intn(2)
		for c := 0; c < crashes; c++ {
			plan := transfertest.CrashPlan{Spec: spec, Point: points[rng.Intn(len(points))], Chunk: 50 + rng.Intn(100), Batch: 20 + rng.Intn(80),
				Source: "source", Target: "target"}
			switch plan.Point {
			case "stage":
				plan.At = 1 + int64(rng.Intn(messages/plan.Chunk))
			default:
				plan.At = 1 + int64(rng.Intn(messages))
			}
			if transfertest.RunCrashingChild(t, plan) {
				killed[plan.Point]++
			}
		}
		e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
		res, err := e.Move(ctx, spec)
		if err != nil {
			t.Fatalf("iteration %d: resume: %v", i, err)
		}
		transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
		if d := transfertest.QueueDepth(t, ctx, srcAdmin, src); d != 0 {
			t.Fatalf("iteration %d: source still holds %d", i, d)
		}
		// A child may have finished the run before its kill point; then this Move starts a new,
		// empty run, and the total belongs to the child's run.
		if res.Resumed && res.RelayedTotal != messages {
			t.Errorf("iteration %d: the run counts %d relayed messages in all, want %d", i, res.RelayedTotal, messages)
		}
		checkNoStaging(t, ctx, srcAdmin, res.RunID)
	}
	t.Logf("kills by point: %v", killed)
	for _, p := range points {
		if killed[p] == 0 && iterations >= 20 {
			t.Errorf("no kill at point %q in %d iterations (seed %d)", p, iterations, seed)
		}
	}
}

// TestReturn_AfterSIGKILLBetweenConfirmAndAckDoublesNothing: the target accepted messages whose
// staged copies were never acknowledged; a return must not put those back on the source.
func TestReturn_AfterSIGKILLBetweenConfirmAndAckDoublesNothing(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "crash.ret")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "r", 500)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	if !transfertest.RunCrashingChild(t, transfertest.CrashPlan{Spec: spec, Point: "confirm", At: 130, Chunk: 500, Batch: 100, Source: "source", Target: "target"}) {
		t.Fatal("the child was not killed")
	}
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
	runs, err := e.unfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	res, err := e.Return(ctx, runs[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	onTarget := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	onSource := transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))
	t.Logf("after the crash and return: %d on the target (%d settled by the return), %d back on the source", len(onTarget), res.Relayed, len(onSource))
	transfertest.CheckSameSet(t, want, append(onTarget, onSource...))
	checkNoStaging(t, ctx, srcAdmin, runs[0].RunID)
}

// TestReturn_RelaysConfirmedBatchesWhoseAcknowledgementsWereLost: the target confirmed a batch
// and the source lost the acknowledgements of its staged messages (a source restart, a cut
// connection), so they are back in staging while the target keeps them; the in-flight record
// lists them as confirmed. A return must relay them (the target drops them as duplicates), not
// put them back on the source, where they would be doubled.
func TestReturn_RelaysConfirmedBatchesWhoseAcknowledgementsWereLost(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "crash.lostack")
	const messages = 200 // one management listing of the source
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "a", messages)
	listed, err := srcAdmin.ListMessages(ctx, src, "")
	if err != nil || len(listed) != messages {
		t.Fatalf("listing the source: %d messages, %v", len(listed), err)
	}
	numberOf := map[int64]int64{} // the source's broker id of each message, to its number
	for _, m := range listed {
		numberOf[jsonInt(m["messageID"])] = jsonInt(m["n"])
	}
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	// Killed as the fourth batch goes out: the first batches are confirmed and acknowledged.
	if !transfertest.RunCrashingChild(t, transfertest.CrashPlan{Spec: spec, Point: "send", At: 121, Chunk: messages, Batch: 40, Source: "source", Target: "target"}) {
		t.Fatal("the child was not killed")
	}
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
	runs, err := e.unfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	runID := runs[0].RunID
	recs, err := e.readRecords(ctx, runID)
	if err != nil || recs.InFlight == nil {
		t.Fatalf("the in-flight record: %+v %v", recs.InFlight, err)
	}
	// The lost acknowledgements: each confirmed message that left staging is staged again, as
	// the broker redelivers an unacknowledged message, with the ids the staging move recorded.
	inFlight := map[int64]bool{}
	for _, id := range recs.InFlight.SourceIDs {
		inFlight[id] = true
	}
	var lostAcks []int64
	for _, id := range recs.InFlight.Confirmed {
		if _, ok := numberOf[id]; !ok {
			t.Fatalf("confirmed id %d is no source message", id)
		}
		if !inFlight[id] { // an in-flight one is still staged: its acknowledgement never went out
			lostAcks = append(lostAcks, id)
		}
	}
	restaged := len(lostAcks)
	transfertest.Produce(t, ctx, srcAdmin, StagingQueue(runID), restaged, func(i int) *amqp.Message {
		id := lostAcks[i]
		return &amqp.Message{
			Header:     &amqp.MessageHeader{Durable: true},
			Properties: &amqp.MessageProperties{MessageID: want[numberOf[id]]},
			ApplicationProperties: map[string]any{"n": numberOf[id], core.PropOrigMessageID: id,
				core.PropOrigQueue: src, core.PropOrigAddress: src},
		}
	})
	if restaged == 0 {
		t.Fatalf("the in-flight record lists no confirmed batch outside the in-flight ones: %+v", recs.InFlight)
	}
	res, err := e.Return(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	onTarget := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	onSource := transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))
	t.Logf("%d confirmed messages staged again; after the return: %d on the target (%d settled by the return), %d back on the source",
		restaged, len(onTarget), res.Relayed+res.Resent, len(onSource))
	transfertest.CheckSameSet(t, want, append(onTarget, onSource...))
	checkNoStaging(t, ctx, srcAdmin, runID)
}

// stoppedAtFirstConfirm is a Mover on the test brokers whose work stops (its context ends) at
// the target's first confirmation, with batches of batch messages: a return or resume
// interrupted after it relayed part of what an earlier process left in flight.
func stoppedAtFirstConfirm(t *testing.T, ctx context.Context, env *testenv.Env, batch int) (*Mover, context.Context) {
	t.Helper()
	stopCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	return &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Options: core.Options{BatchSize: batch}, Hooks: core.Hooks{AfterConfirm: stop}}}, stopCtx
}

// A crashed child leaves two batches of 100 in flight, all sent and so on the target, and 130 of
// them confirmed; each later process relays in batches of 30. An in-flight record written after
// the crash must still list the ids of the crash's batches it has not relayed: else the next
// return puts those back on the source while the target holds them.
const (
	interruptedMessages = 500
	interruptedCrashAt  = 130
)

// TestReturn_InterruptedTwiceDoublesNothing: two returns stopped after relaying part of the
// crashed process's in-flight batches, then a third that completes: every message ends on
// exactly one broker.
func TestReturn_InterruptedTwiceDoublesNothing(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "crash.ret2")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "r2", interruptedMessages)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	if !transfertest.RunCrashingChild(t, transfertest.CrashPlan{Spec: spec, Point: "confirm", At: interruptedCrashAt, Chunk: interruptedMessages, Batch: 100, Source: "source", Target: "target"}) {
		t.Fatal("the child was not killed")
	}
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
	runs, err := e.unfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	runID := runs[0].RunID
	// Each interrupted return relays something (the crash's batches still staged) before it
	// stops; one that relays nothing finishes, and the check below shows what it put back.
	var res core.Result
	finished := false
	for i := 0; i < 2 && !finished; i++ {
		stopped, stopCtx := stoppedAtFirstConfirm(t, ctx, env, 30)
		res, err = stopped.Return(stopCtx, runID)
		finished = err == nil
		t.Logf("return %d relayed %d, returned %d, finished %v: %v", i+1, res.Relayed, res.Returned, finished, err)
	}
	if !finished {
		if res, err = e.Return(ctx, runID); err != nil {
			t.Fatal(err)
		}
	}
	onTarget := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	onSource := transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))
	t.Logf("after the crash and the returns: %d on the target (%d settled by the last return), %d back on the source", len(onTarget), res.Relayed+res.Resent, len(onSource))
	transfertest.CheckSameSet(t, want, append(onTarget, onSource...))
	checkNoStaging(t, ctx, srcAdmin, runID)
}

// TestResume_InterruptedThenReturnedDoublesNothing: a resume stopped after relaying part of the
// crashed process's in-flight batches, then a return: every message ends on exactly one broker.
func TestResume_InterruptedThenReturnedDoublesNothing(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "crash.resret")
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "rr", interruptedMessages)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	if !transfertest.RunCrashingChild(t, transfertest.CrashPlan{Spec: spec, Point: "confirm", At: interruptedCrashAt, Chunk: interruptedMessages, Batch: 100, Source: "source", Target: "target"}) {
		t.Fatal("the child was not killed")
	}
	stopped, stopCtx := stoppedAtFirstConfirm(t, ctx, env, 30)
	res, err := stopped.Move(stopCtx, spec)
	if err == nil {
		t.Fatalf("the resume was not interrupted: %+v", res)
	}
	if !res.Resumed {
		t.Fatalf("run %s was not resumed: the child's run was not found", res.RunID)
	}
	t.Logf("the resume stopped after relaying %d: %v", res.Relayed, err)
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
	ret, err := e.Return(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	onTarget := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	onSource := transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))
	t.Logf("after the crash, the resume and the return: %d on the target (%d settled by the return), %d back on the source", len(onTarget), ret.Relayed+ret.Resent, len(onSource))
	transfertest.CheckSameSet(t, want, append(onTarget, onSource...))
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
}
