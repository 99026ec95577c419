package transfer

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// TestCopy_MeasureThroughputBesideMove is a measurement, not a check: it copies and moves the
// same 100,000 messages of 1 KiB on the environment's brokers, each in a process of its own,
// and logs the rates and peak RSS. Run it with TRANSFER_MEASURE_COPY=1.
func TestCopy_MeasureThroughputBesideMove(t *testing.T) {
	if os.Getenv("TRANSFER_MEASURE_COPY") != "1" {
		t.Skip("a measurement: set TRANSFER_MEASURE_COPY=1")
	}
	ctx := transfertest.Ctx(t, 60*time.Minute)
	const n = 100_000
	env := testenv.Require(t)
	srcAdmin, tgtAdmin := testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	dsn := transfertest.LedgerDSN(t, env)
	l := testenv.OpenLedger(t, dsn)
	src, tgt := testenv.UniqueName("measure.src"), testenv.UniqueName("measure.tgt")
	testenv.FixtureQueue(t, ctx, srcAdmin, src)
	testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
	transfertest.Produce(t, ctx, srcAdmin, src, n, func(i int) *amqp.Message {
		now := time.Now()
		return &amqp.Message{Header: &amqp.MessageHeader{Durable: true},
			Properties: &amqp.MessageProperties{MessageID: "m-" + strconv.Itoa(i), CreationTime: &now},
			Data:       [][]byte{bytes.Repeat([]byte{'x'}, 1024)}}
	})
	copySpec := Spec{Mode: ModeCopy, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}}
	// The child copies with the ledger of this test (runChild).
	t.Setenv(childLedgerEnv, dsn)
	started := time.Now()
	copyRSS := transfertest.RunRelayChild(t, transfertest.CrashPlan{Spec: copySpec, Source: "source", Target: "target", Batch: DefaultBatchSize})
	copyTook := time.Since(started)
	if runs, err := l.ListRuns(ctx, ledger.RunFilter{SourceQueue: src}); err != nil || len(runs) != 1 || runs[0].Counters.Relayed != n {
		t.Fatalf("copy: runs %+v, %v; want one that copied %d", runs, err, n)
	}
	if d := transfertest.QueueDepth(t, ctx, tgtAdmin, tgt); d != n {
		t.Fatalf("the copy's target holds %d of %d", d, n)
	}
	// The move takes the same source messages to a second target queue.
	tgt2 := testenv.UniqueName("measure.move")
	testenv.FixtureQueue(t, ctx, tgtAdmin, tgt2)
	spec := Spec{Mode: ModeMove, Source: copySpec.Source, Target: Endpoint{Broker: "target", Queue: tgt2}}
	t.Cleanup(func() { transfertest.RemoveRunsOf(t, srcAdmin, spec) })
	started = time.Now()
	moveRSS := transfertest.RunRelayChild(t, transfertest.CrashPlan{Spec: spec, Source: "source", Target: "target"})
	moveTook := time.Since(started)
	if d := transfertest.QueueDepth(t, ctx, tgtAdmin, tgt2); d != n {
		t.Fatalf("the move's target holds %d of %d", d, n)
	}
	// The copy's time includes its child's start, its plan, and the 3 s idle wait that ends
	// its browse; the move's its child's start, its plan and staging.
	t.Logf("100,000 x 1 KiB: copy %s (%.0f msg/s, peak RSS %d KiB), move %s (%.0f msg/s, peak RSS %d KiB): copy at %.0f%% of move",
		copyTook.Round(time.Millisecond), n/copyTook.Seconds(), copyRSS, moveTook.Round(time.Millisecond), n/moveTook.Seconds(), moveRSS,
		100*moveTook.Seconds()/copyTook.Seconds())
}
