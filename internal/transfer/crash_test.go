package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// The crash tests run the engine in a child process (this test binary, re-executed) that
// kills itself with SIGKILL at a chosen point; the parent then resumes or returns the run and
// checks that nothing was lost or doubled.
const crashChildEnv = "TRANSFER_CRASH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) == "1" {
		os.Exit(runCrashChild())
	}
	os.Exit(m.Run())
}

// crashPlan tells the child where to die.
type crashPlan struct {
	Spec   Spec   `json:"spec"`
	Point  string `json:"point"` // stage: after a staging chunk; send: before a send (earlier sends unconfirmed); confirm: after the target confirmed, before the source ack
	At     int64  `json:"at"`    // the how-manyth event of that kind
	Chunk  int    `json:"chunk"`
	Batch  int    `json:"batch"`
	Source string `json:"source"`
	Target string `json:"target"`
}

// runCrashChild runs in the child process. Exit codes: 3 = the run finished before the kill
// point, 1 = an error. A kill shows as the signal.
func runCrashChild() int {
	var plan crashPlan
	if err := json.Unmarshal([]byte(os.Getenv("TRANSFER_CRASH_PLAN")), &plan); err != nil {
		fmt.Fprintln(os.Stderr, "crash plan:", err)
		return 1
	}
	env, err := testenv.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	client := func(name string) *artemis.Client {
		b := env.Brokers[name]
		c, err := artemis.New(artemis.Config{Name: name, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
			Username: env.TransferUser, Password: env.TransferPassword})
		if err != nil {
			panic(err)
		}
		return c
	}
	var count atomic.Int64
	die := func() {
		if count.Add(1) == plan.At {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute) // the signal is on its way
		}
	}
	var h Hooks
	switch plan.Point {
	case "stage":
		h.AfterStageChunk = die
	case "send":
		h.BeforeSend = die
	case "confirm":
		h.AfterConfirm = die
	}
	e := &Engine{Source: client(plan.Source), Target: client(plan.Target), Options: Options{ChunkSize: plan.Chunk, BatchSize: plan.Batch}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := e.move(ctx, plan.Spec, h); err != nil {
		fmt.Fprintln(os.Stderr, "move:", err)
		return 1
	}
	// The parent reads the peak RSS from here: VmHWM is this process's own high-water mark,
	// whereas the rusage a parent gets also counts the parent's memory before exec.
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmHWM:") {
				fmt.Println("peak-rss-kib:", strings.Fields(line)[1])
			}
		}
	}
	return 3
}

// runCrashingChild runs the engine in a child process that kills itself as planned. It reports
// whether the child was killed (false: the run ended before the kill point).
func runCrashingChild(t *testing.T, plan crashPlan) bool {
	t.Helper()
	raw, _ := json.Marshal(plan)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", "TRANSFER_CRASH_PLAN="+string(raw))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
		if exit.ExitCode() == 3 {
			return false
		}
	}
	t.Fatalf("crash child: %v\n%s", err, out.String())
	return false
}

// produceNumbered sends n durable messages with message ids "<prefix>-<i>" to a queue, with
// our own client: fast fixtures for the fault tests (fidelity tests use other clients).
func produceNumbered(t *testing.T, ctx context.Context, c *artemis.Client, queue, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	produce(t, ctx, c, queue, n, func(i int) *amqp.Message {
		ids[i] = prefix + "-" + strconv.Itoa(i)
		now := time.Now()
		return &amqp.Message{
			Header:                &amqp.MessageHeader{Durable: true},
			Properties:            &amqp.MessageProperties{MessageID: ids[i], CreationTime: &now},
			ApplicationProperties: map[string]any{"n": int64(i)},
			Data:                  [][]byte{bytes.Repeat([]byte{'x'}, 200)},
		}
	})
	return ids
}

// produce sends the n messages build makes to a queue, pipelined, and waits until the broker
// has stored them all.
func produce(t *testing.T, ctx context.Context, c *artemis.Client, queue string, n int, build func(i int) *amqp.Message) {
	t.Helper()
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := conn.NewSender(ctx, queue+"::"+queue, artemis.SenderOptions{MaxInFlight: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	pending := make([]*artemis.PendingSend, 0, n)
	for i := 0; i < n; i++ {
		p, err := s.Send(ctx, build(i))
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	for _, p := range pending {
		if err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMove_SurvivesSIGKILLAtSeededPoints kills the relay process at random points — during
// staging, between send and confirm, between confirm and source ack — then resumes the run in
// another process, and checks the target holds every message exactly once.
func TestMove_SurvivesSIGKILLAtSeededPoints(t *testing.T) {
	env := testenv.Require(t)
	iterations := 20
	if testing.Short() {
		iterations = 4
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("TRANSFER_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (set TRANSFER_CRASH_SEED to replay)", seed)
	rng := rand.New(rand.NewSource(seed))
	points := []string{"stage", "send", "confirm"}
	ctx := testCtx(t, 15*time.Minute)
	srcAdmin, tgtAdmin := testClient(t, env, "source", true), testClient(t, env, "target", true)
	const messages = 400
	killed := map[string]int{}
	for i := 0; i < iterations; i++ {
		src, tgt := testenv.UniqueName("crash.src"), testenv.UniqueName("crash.tgt")
		fixtureQueue(t, ctx, srcAdmin, src)
		fixtureQueue(t, ctx, tgtAdmin, tgt)
		want := produceNumbered(t, ctx, srcAdmin, src, fmt.Sprintf("c%d", i), messages)
		spec := Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}}
		t.Cleanup(func() { removeRunsOf(t, srcAdmin, spec) })

		// One or two crashes, then a clean resume.
		crashes := 1 + rng.Intn(2)
		for c := 0; c < crashes; c++ {
			plan := crashPlan{Spec: spec, Point: points[rng.Intn(len(points))], Chunk: 50 + rng.Intn(100), Batch: 20 + rng.Intn(80),
				Source: "source", Target: "target"}
			switch plan.Point {
			case "stage":
				plan.At = 1 + int64(rng.Intn(messages/plan.Chunk))
			default:
				plan.At = 1 + int64(rng.Intn(messages))
			}
			if runCrashingChild(t, plan) {
				killed[plan.Point]++
			}
		}
		e := &Engine{Source: testClient(t, env, "source", false), Target: testClient(t, env, "target", false)}
		res, err := e.Move(ctx, spec)
		if err != nil {
			t.Fatalf("iteration %d: resume: %v", i, err)
		}
		checkSameSet(t, want, consumeAll(t, ctx, tgtAdmin, tgt+"::"+tgt))
		if d := queueDepth(t, ctx, srcAdmin, src); d != 0 {
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
	ctx := testCtx(t, 5*time.Minute)
	srcAdmin, tgtAdmin := testClient(t, env, "source", true), testClient(t, env, "target", true)
	src, tgt := testenv.UniqueName("crash.ret.src"), testenv.UniqueName("crash.ret.tgt")
	fixtureQueue(t, ctx, srcAdmin, src)
	fixtureQueue(t, ctx, tgtAdmin, tgt)
	want := produceNumbered(t, ctx, srcAdmin, src, "r", 500)
	spec := Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}}
	t.Cleanup(func() { removeRunsOf(t, srcAdmin, spec) })
	if !runCrashingChild(t, crashPlan{Spec: spec, Point: "confirm", At: 130, Chunk: 500, Batch: 100, Source: "source", Target: "target"}) {
		t.Fatal("the child was not killed")
	}
	e := &Engine{Source: testClient(t, env, "source", false), Target: testClient(t, env, "target", false)}
	runs, err := e.UnfinishedRuns(ctx, &spec)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	res, err := e.Return(ctx, runs[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	onTarget := consumeAll(t, ctx, tgtAdmin, tgt+"::"+tgt)
	onSource := consumeAll(t, ctx, srcAdmin, src+"::"+src)
	t.Logf("after the crash and return: %d on the target (%d settled by the return), %d back on the source", len(onTarget), res.Relayed, len(onSource))
	checkSameSet(t, want, append(onTarget, onSource...))
	checkNoStaging(t, ctx, srcAdmin, runs[0].RunID)
}

// runRelayChild runs a whole move in a child process and returns its peak RSS in KiB, as the
// child measured it (VmHWM).
func runRelayChild(t *testing.T, plan crashPlan) int64 {
	t.Helper()
	plan.Point, plan.At = "none", 0
	raw, _ := json.Marshal(plan)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", "TRANSFER_CRASH_PLAN="+string(raw))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("relay child: %v\n%s", err, out.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "peak-rss-kib: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("relay child reported no peak RSS:\n%s", out.String())
	return 0
}

// TestMove_PeakRSSStaysFlatFrom10kTo200kMessages runs the relay in its own process on 10,000
// and on 200,000 messages: its peak memory must not grow with the queue.
func TestMove_PeakRSSStaysFlatFrom10kTo200kMessages(t *testing.T) {
	env := testenv.Require(t)
	if testing.Short() {
		t.Skip("moves 210,000 messages")
	}
	ctx := testCtx(t, 20*time.Minute)
	srcAdmin, tgtAdmin := testClient(t, env, "source", true), testClient(t, env, "target", true)
	rss := map[int]int64{}
	for _, n := range []int{10_000, 200_000} {
		src, tgt := testenv.UniqueName("rss.src"), testenv.UniqueName("rss.tgt")
		fixtureQueue(t, ctx, srcAdmin, src)
		fixtureQueue(t, ctx, tgtAdmin, tgt)
		produceNumbered(t, ctx, srcAdmin, src, fmt.Sprintf("rss%d", n), n)
		spec := Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}}
		t.Cleanup(func() { removeRunsOf(t, srcAdmin, spec) })
		start := time.Now()
		rss[n] = runRelayChild(t, crashPlan{Spec: spec, Source: "source", Target: "target"})
		took := time.Since(start)
		if d := queueDepth(t, ctx, tgtAdmin, tgt); d != int64(n) {
			t.Fatalf("target holds %d of %d", d, n)
		}
		t.Logf("%d messages: peak RSS %d KiB, %s (%.0f msg/s)", n, rss[n], took.Round(time.Millisecond), float64(n)/took.Seconds())
		// The target queue is destroyed with its messages by the fixture cleanup.
	}
	// Flat: the 20-times larger queue may not cost more than a few MiB of noise.
	if growth := rss[200_000] - rss[10_000]; growth > 6*1024 {
		t.Errorf("peak RSS grew by %d KiB from 10,000 to 200,000 messages (%d -> %d KiB)", growth, rss[10_000], rss[200_000])
	}
	if rss[200_000] > 64*1024 {
		t.Errorf("peak RSS %d KiB is above the 64 MiB target for 1 KiB-class messages", rss[200_000])
	}
}
