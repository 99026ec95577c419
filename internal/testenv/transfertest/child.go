package transfertest

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

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// A crash child is a package's own test binary, re-executed with a CrashPlan in its
// environment: its TestMain sees IsCrashChild and exits with RunCrashChild, which runs the
// package's transfer and kills the process with SIGKILL at the plan's point. The parent then
// resumes or returns the run and checks that nothing was lost or doubled.
const (
	crashChildEnv = "TRANSFER_CRASH_CHILD"
	crashPlanEnv  = "TRANSFER_CRASH_PLAN"
)

// Exit codes of a crash child; a kill shows as the signal.
const (
	childFailed   = 1
	childFinished = 3
)

// CrashPlan tells a crash child what to run and where to die.
type CrashPlan struct {
	Spec core.Spec `json:"spec"`
	// Point is stage: after a staging chunk; send: before a send (earlier sends unconfirmed);
	// confirm: after the target confirmed, before the source ack; none: never; or one of a
	// move's named instants (core.Point: manifest-queue, staging-created, ...).
	Point  string `json:"point"`
	At     int64  `json:"at"` // the how-manyth event of that kind
	Chunk  int    `json:"chunk"`
	Batch  int    `json:"batch"`
	Source string `json:"source"`
	Target string `json:"target"`
}

// IsCrashChild reports whether this test binary runs as a crash child: then its TestMain exits
// with RunCrashChild instead of running the tests.
func IsCrashChild() bool { return os.Getenv(crashChildEnv) == "1" }

// RunCrashChild runs in the child process: it gives run an engine setup of the plan's brokers
// (as the transfer user), chunk and batch sizes, with hooks that kill the process at the plan's
// point, and prints the process's peak RSS when run returns. It returns the exit code: 3 = the
// run finished before the kill point, 1 = an error.
func RunCrashChild(run func(ctx context.Context, e *core.Setup, spec core.Spec) error) int {
	var plan CrashPlan
	if err := json.Unmarshal([]byte(os.Getenv(crashPlanEnv)), &plan); err != nil {
		fmt.Fprintln(os.Stderr, "crash plan:", err)
		return childFailed
	}
	env, err := testenv.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return childFailed
	}
	client := func(name string) (*artemis.Client, error) {
		b := env.Brokers[name]
		return artemis.New(artemis.Config{Name: name, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
			Username: env.TransferUser, Password: env.TransferPassword})
	}
	e := &core.Setup{Options: core.Options{ChunkSize: plan.Chunk, BatchSize: plan.Batch}}
	if e.Source, err = client(plan.Source); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return childFailed
	}
	if e.Target, err = client(plan.Target); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return childFailed
	}
	var count atomic.Int64
	die := func() {
		if count.Add(1) == plan.At {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute) // the signal is on its way
		}
	}
	switch plan.Point {
	case "stage":
		e.Hooks.AfterStageChunk = die
	case "send":
		e.Hooks.BeforeSend = die
	case "confirm":
		e.Hooks.AfterConfirm = die
	default:
		e.Hooks.Reached = func(p core.Point) {
			if string(p) == plan.Point {
				die()
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, e, plan.Spec); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		return childFailed
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
	return childFinished
}

// startChild runs this test binary as a crash child of plan and returns its combined output
// and how it ended. A child still running when the test ends is killed.
func startChild(t *testing.T, plan CrashPlan) (string, error) {
	raw, _ := json.Marshal(plan)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", crashPlanEnv+"="+string(raw))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// RunCrashingChild runs the transfer in a child process that kills itself as planned. It
// reports whether the child was killed (false: the run ended before the kill point).
func RunCrashingChild(t *testing.T, plan CrashPlan) bool {
	t.Helper()
	out, err := startChild(t, plan)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
		if exit.ExitCode() == childFinished {
			return false
		}
	}
	t.Fatalf("crash child: %v\n%s", err, out)
	return false
}

// RunRelayChild runs a whole transfer in a child process and returns its peak RSS in KiB, as
// the child measured it (VmHWM).
func RunRelayChild(t *testing.T, plan CrashPlan) int64 {
	t.Helper()
	plan.Point, plan.At = "none", 0
	out, err := startChild(t, plan)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != childFinished {
		t.Fatalf("relay child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "peak-rss-kib: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("relay child reported no peak RSS:\n%s", out)
	return 0
}

// CrashRounds is how many rounds a crash test runs (short under -short, full otherwise) and the
// seed of its random kill points, from TRANSFER_CRASH_SEED when set (to replay a failure) and
// from the clock otherwise, logged, with a source seeded by it.
func CrashRounds(t *testing.T, full, short int) (rounds int, seed int64, rng *rand.Rand) {
	t.Helper()
	rounds = full
	if testing.Short() {
		rounds = short
	}
	seed = time.Now().UnixNano()
	if s := os.Getenv("TRANSFER_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (set TRANSFER_CRASH_SEED to replay)", seed)
	return rounds, seed, rand.New(rand.NewSource(seed))
}
