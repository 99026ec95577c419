package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// RelayChildEnv, set to 1, makes the bench binary run one relay (RunRelayChild) instead of the
// benchmark: the parent re-executes itself so that the peak memory measured is the relay's
// alone.
const RelayChildEnv = "BENCH_RELAY_CHILD"

// relayResultPrefix starts the child's one line of result on stdout.
const relayResultPrefix = "bench-relay-result: "

// BrokerAccess is how the relay reaches one broker.
type BrokerAccess struct {
	Name          string `json:"name"`
	AMQPURL       string `json:"amqp_url"`
	ManagementURL string `json:"management_url"`
	Username      string `json:"username"`
	Password      string `json:"password"`
}

func (b BrokerAccess) client() (*artemis.Client, error) {
	return artemis.New(artemis.Config{Name: b.Name, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
		Username: b.Username, Password: b.Password, RequestTimeout: 70 * time.Second})
}

// RelayTuning are the engine options a benchmark may set; zero values are the engine's defaults.
type RelayTuning struct {
	ChunkSize        int   `json:"chunk_size,omitempty"`
	BatchSize        int   `json:"batch_size,omitempty"`
	MaxInFlightBytes int64 `json:"max_in_flight_bytes,omitempty"`
}

// relayPlan is what the parent hands the child, on its standard input (it holds passwords).
type relayPlan struct {
	Source  BrokerAccess  `json:"source"`
	Target  BrokerAccess  `json:"target"`
	Spec    transfer.Spec `json:"spec"`
	Tuning  RelayTuning   `json:"tuning"`
	Timeout time.Duration `json:"timeout"`
	// LedgerDSN is the transfer ledger a copy (Spec.Mode copy) records what it copied in.
	LedgerDSN string `json:"ledger_dsn,omitempty"`
	// KillAtRelayed, when above 0, makes the child kill itself (SIGKILL, as a crash or an
	// operator's kill -9) once the engine reports that many messages relayed.
	KillAtRelayed int64 `json:"kill_at_relayed,omitempty"`
	// ResumeRunID, when set, resumes that run of Spec (Engine.Resume) instead of starting one.
	ResumeRunID string `json:"resume_run_id,omitempty"`
	// MemoryDetail makes the child follow its own memory (MemoryAtPeak with the heap's part),
	// for cases of large messages; it reads its memory every ownMemoryPoll.
	MemoryDetail bool `json:"memory_detail,omitempty"`
}

// ManagementRequests are the management (Jolokia) requests one run of ours sent each broker,
// its preflight included: each costs the broker milliseconds of CPU.
type ManagementRequests struct {
	Source int64 `json:"source"`
	Target int64 `json:"target"`
}

// RelayTimes are what the child measured of one Move (or Copy), in seconds. The phases come from the
// engine's progress reports; they hold whether the engine stages and relays one after the
// other or at the same time.
type RelayTimes struct {
	Move float64 `json:"move_s"` // the whole Move call
	// Setup is from the call to the first progress report: preflight, staging queues, lease.
	Setup float64 `json:"setup_s"`
	// Staging is from the first progress report to the one where the whole selection is staged
	// (broker-side moves).
	Staging float64 `json:"staging_s"`
	// Relay is from the first report of the relaying phase (or of a relayed message, if that
	// came first) to the finishing phase: links, sends, confirmations.
	Relay float64 `json:"relay_s"`
	// Active is from the first progress report to the finishing phase: staging and relay, and
	// any time between them.
	Active float64 `json:"active_s"`
	// Finish is removing staging, to the end of the call.
	Finish float64 `json:"finish_s"`
	// Overlap says that staging was still going on when the relay had begun.
	Overlap bool `json:"overlap"`
	// FirstRelayed is from the call to the first report whose relayed count is above the
	// first report's: the first batch the target confirmed (for a resume, the first of this
	// process). 0 when none was.
	FirstRelayed float64 `json:"first_relayed_s,omitempty"`
}

// relayChildResult is the child's one line of result.
type relayChildResult struct {
	Times      RelayTimes `json:"times"`
	Relayed    int64      `json:"relayed"`
	PeakRSSKiB int64      `json:"peak_rss_kib"`
	// Memory is where the child's memory was at its highest (when the plan asked).
	Memory *MemoryAtPeak `json:"memory,omitempty"`
	// Requests are the management requests the run sent each broker.
	Requests *ManagementRequests `json:"management_requests,omitempty"`
	Waits    []string            `json:"waits,omitempty"` // distinct reasons the run waited (at most a few)
	Error    string              `json:"error,omitempty"`
}

// phaseClock records when the engine's progress reports changed phase or count. The engine
// calls Progress and it must not block, so it only takes a mutex and a time stamp.
type phaseClock struct {
	mu sync.Mutex
	// first report; last increase of Staged; first report of relaying or of a relayed message;
	// first report of finishing.
	first, staged, relayStart, finishing time.Time
	maxStaged, relayed                   int64
	waits                                []string
	// firstRelayed is the first report whose relayed count is above firstCount, the first
	// report's.
	firstRelayed time.Time
	firstCount   int64
}

func (p *phaseClock) observe(pr transfer.Progress) { p.observeAt(pr, time.Now()) }

func (p *phaseClock) observeAt(pr transfer.Progress, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first.IsZero() {
		p.first, p.firstCount = now, pr.Relayed
	}
	if p.firstRelayed.IsZero() && pr.Relayed > p.firstCount {
		p.firstRelayed = now
	}
	if pr.Staged > p.maxStaged {
		p.maxStaged, p.staged = pr.Staged, now
	}
	if p.relayStart.IsZero() && (pr.Phase == "relaying" || pr.Relayed > 0) {
		p.relayStart = now
	}
	if pr.Phase == "finishing" && p.finishing.IsZero() {
		p.finishing = now
	}
	p.relayed = max(p.relayed, pr.Relayed)
	if pr.Waiting != "" && len(p.waits) < 5 {
		reason, _, _ := strings.Cut(pr.Waiting, "(") // the reason, without the varying detail
		for _, w := range p.waits {
			if w == reason {
				return
			}
		}
		p.waits = append(p.waits, reason)
	}
}

// times splits the Move call [start, end] at the recorded reports.
func (p *phaseClock) times(start, end time.Time) RelayTimes {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := RelayTimes{Move: end.Sub(start).Seconds()}
	if p.first.IsZero() {
		t.Setup = t.Move // the run stopped before it reported anything
		return t
	}
	finishing := p.finishing
	if finishing.IsZero() {
		finishing = end
	}
	staged := p.staged
	if staged.IsZero() {
		staged = p.first
	}
	relayStart := p.relayStart
	if relayStart.IsZero() {
		relayStart = finishing
	}
	t.Setup = p.first.Sub(start).Seconds()
	t.Staging = staged.Sub(p.first).Seconds()
	t.Relay = finishing.Sub(relayStart).Seconds()
	t.Active = finishing.Sub(p.first).Seconds()
	t.Finish = end.Sub(finishing).Seconds()
	t.Overlap = relayStart.Before(staged)
	if !p.firstRelayed.IsZero() {
		t.FirstRelayed = p.firstRelayed.Sub(start).Seconds()
	}
	return t
}

// RunRelayChild is the child process: it reads a plan from stdin, runs one Move (or Copy), and prints
// its times and its own peak memory (VmHWM) on stdout. It returns the exit code.
func RunRelayChild(stdin io.Reader, stdout io.Writer) int {
	var plan relayPlan
	if err := json.NewDecoder(stdin).Decode(&plan); err != nil {
		fmt.Fprintln(os.Stderr, "bench relay child: reading the plan:", err)
		return 2
	}
	// For development: BENCH_RELAY_CPUPROFILE=<file> writes the relay's Go CPU profile.
	if path := os.Getenv("BENCH_RELAY_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	// The provider process runs under this soft memory limit (set in its main); so does the child, so
	// that its peak RSS is the provider's.
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(transfer.MemoryLimit(transfer.DefaultMaxInFlightBytes))
	}
	stopWatching := func() MemoryAtPeak { return MemoryAtPeak{} }
	if plan.MemoryDetail {
		stopWatching = watchOwnMemory()
	}
	res := relayChild(plan)
	if at := stopWatching(); at.RSSKiB > 0 {
		res.Memory = &at
	}
	if kib, err := PeakRSSKiB(0); err == nil {
		res.PeakRSSKiB = kib
	}
	line, _ := json.Marshal(res)
	fmt.Fprintf(stdout, "%s%s\n", relayResultPrefix, line)
	if res.Error != "" {
		return 1
	}
	return 0
}

func relayChild(plan relayPlan) relayChildResult {
	src, err := plan.Source.client()
	if err != nil {
		return relayChildResult{Error: err.Error()}
	}
	tgt, err := plan.Target.client()
	if err != nil {
		return relayChildResult{Error: err.Error()}
	}
	clock := &phaseClock{}
	progress := clock.observe
	if plan.KillAtRelayed > 0 {
		progress = func(pr transfer.Progress) {
			clock.observe(pr)
			if pr.Relayed >= plan.KillAtRelayed {
				// Nothing is flushed or closed: the run ends as a crash ends it.
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	e := &transfer.Engine{Source: src, Target: tgt, Options: transfer.Options{
		ChunkSize: plan.Tuning.ChunkSize, BatchSize: plan.Tuning.BatchSize, MaxInFlightBytes: plan.Tuning.MaxInFlightBytes,
		Progress: progress, CreatedBy: "bench",
	}}
	ctx, cancel := context.WithTimeout(context.Background(), plan.Timeout)
	defer cancel()
	start := time.Now()
	if plan.Spec.Mode == transfer.ModeCopy {
		// A copy records in the ledger. Opening it (connect, migrate) is part of the copy's
		// time, as it is of an apply.
		var l *ledger.Ledger
		if l, err = ledger.Open(ctx, plan.LedgerDSN); err != nil {
			return relayChildResult{Error: fmt.Sprintf("opening the copy's ledger: %v", err)}
		}
		defer l.Close()
		e.Bookkeeper = transfer.NewLedgerBook(l, ledger.Creator{User: "bench", Workspace: "bench"})
	}
	var res transfer.Result
	if plan.ResumeRunID != "" {
		res, err = e.Resume(ctx, plan.ResumeRunID, &plan.Spec)
	} else {
		res, err = e.Run(ctx, plan.Spec)
	}
	end := time.Now()
	out := relayChildResult{Times: clock.times(start, end), Relayed: res.Relayed,
		Requests: &ManagementRequests{Source: src.ManagementRequests(), Target: tgt.ManagementRequests()}}
	clock.mu.Lock()
	out.Waits = append(out.Waits, clock.waits...)
	clock.mu.Unlock()
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

// ProcessRun is what the parent saw of one child process: a relay or an artemis command.
type ProcessRun struct {
	WallSeconds float64 `json:"wall_s"`
	// CPUSeconds is the process's user and system time (rusage: correct for a child, unlike
	// its max RSS).
	CPUSeconds float64 `json:"cpu_s"`
	// PeakRSSKiB: for the relay, its own VmHWM at the end; for a JVM, the last VmHWM read by
	// polling its /proc status (it may miss growth in the last poll interval).
	PeakRSSKiB int64 `json:"peak_rss_kib"`
	// Memory is where the memory of our relaying process (the relay child or the provider)
	// was at its highest resident set read; nil for the JVMs and where it was not followed.
	Memory     *MemoryAtPeak `json:"memory,omitempty"`
	ExitCode   int           `json:"exit_code"`
	OutputTail string        `json:"output_tail,omitempty"`
}

// runRelay moves (or copies, recording in the ledger at ledgerDSN) spec in a child process
// (this executable again, with RelayChildEnv=1) and returns what the child measured.
func runRelay(ctx context.Context, source, target BrokerAccess, spec transfer.Spec, ledgerDSN string, tuning RelayTuning, timeout time.Duration, memoryDetail bool, log io.Writer) (ProcessRun, relayChildResult, error) {
	return runRelayPlan(ctx, relayPlan{Source: source, Target: target, Spec: spec, Tuning: tuning, Timeout: timeout, LedgerDSN: ledgerDSN, MemoryDetail: memoryDetail}, log)
}

// runRelayPlan runs one relay child with plan.
func runRelayPlan(ctx context.Context, rp relayPlan, log io.Writer) (ProcessRun, relayChildResult, error) {
	timeout := rp.Timeout
	self, err := os.Executable()
	if err != nil {
		return ProcessRun{}, relayChildResult{}, fmt.Errorf("finding the bench executable to run the relay: %w", err)
	}
	plan, err := json.Marshal(rp)
	if err != nil {
		return ProcessRun{}, relayChildResult{}, fmt.Errorf("encoding the relay plan: %w", err)
	}
	// The child's own timeout ends the Move; the parent's is a backstop for a child that hangs.
	runCtx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, self)
	cmd.Env = append(os.Environ(), RelayChildEnv+"=1")
	cmd.Stdin = bytes.NewReader(plan)
	var stdout bytes.Buffer
	stderr := &harness.TailBuffer{Max: 4096}
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(stderr, log)
	start := time.Now()
	runErr := cmd.Run()
	pr := processRun(cmd.ProcessState, time.Since(start), stderr.String())
	var res relayChildResult
	found := false
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), relayResultPrefix); ok {
			found = json.Unmarshal([]byte(v), &res) == nil
		}
	}
	if !found {
		return pr, res, fmt.Errorf("the relay child reported nothing (%w): %s", runErr, pr.OutputTail)
	}
	pr.PeakRSSKiB, pr.Memory = res.PeakRSSKiB, res.Memory
	if res.Error != "" {
		return pr, res, fmt.Errorf("relay: %s", res.Error)
	}
	if runErr != nil {
		return pr, res, fmt.Errorf("relay child: %w", runErr)
	}
	return pr, res, nil
}

// processRun reads the wall time, CPU time and exit code of a finished command from its exit
// state (nil: it did not run).
func processRun(st *os.ProcessState, wall time.Duration, tail string) ProcessRun {
	pr := ProcessRun{WallSeconds: wall.Seconds(), OutputTail: tail, ExitCode: -1}
	if st != nil {
		pr.ExitCode = st.ExitCode()
		pr.CPUSeconds = (st.UserTime() + st.SystemTime()).Seconds()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			pr.OutputTail = fmt.Sprintf("killed by %s; %s", ws.Signal(), tail)
		}
	}
	return pr
}
