package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/harness"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// Config is one benchmark run.
type Config struct {
	Profile Profile
	Env     *testenv.Env
	// RelayUser is the user our relay runs as: "transfer" (least privilege, the default) or
	// "admin". artemis transfer and artemis perf always run as admin: they consume any queue.
	RelayUser   string
	RelayTuning RelayTuning
	// TunedCommit is the commit interval of the tuned artemis transfer variants.
	TunedCommit int
	// PerfProtocols are the protocols the raw limit is measured over (CORE, AMQP).
	PerfProtocols []string
	// Contenders, when not empty, limits the run to these contender ids (for development).
	Contenders []string
	// ProviderDir, when set, holds the built terraform-provider-artemis: the contender
	// "ours (terraform apply)" then runs the terraform at TerraformPath with it.
	ProviderDir, TerraformPath string
	// Brokers says how the environment's brokers were created, for the report.
	Brokers string
	// SampleFrom is the least case size whose moves are sampled (Trial.Samples); 0: sampleFrom.
	SampleFrom int
	// WorkDir holds the perf reports; RepoDir is the checkout (for the commit).
	WorkDir, RepoDir string
	Log              io.Writer
}

// bench is one run in progress.
type bench struct {
	cfg                  Config
	res                  *Results
	srcAdmin, tgtAdmin   *artemis.Client
	srcAccess, tgtAccess BrokerAccess
	srcURLs, tgtURLs     BrokerURLs
	cli                  ArtemisCLI
	contenders           []Contender
	sourcePID, targetPID int
	seq                  int
	started              time.Time
	// ledger is the copy contender's ledger database: one per benchmark run, so that no run of
	// an earlier benchmark (or of a test) shares its tables, dropped at the end; nil when no
	// copy runs.
	ledger *harness.Database
}

// Run measures every case of the profile and returns the results. A run stopped early (ctx, or
// an error of the environment) returns what it measured so far, with Complete false, and the
// error.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	b := &bench{cfg: cfg, started: time.Now(), res: &Results{Profile: cfg.Profile, Started: time.Now().UTC(), RelayUser: cfg.RelayUser,
		RelayTuning: cfg.RelayTuning, CommandLines: map[string]string{}, Brokers: cfg.Brokers}}
	start := time.Now()
	err := b.run(ctx)
	if b.ledger != nil {
		if derr := b.ledger.Drop(ctx); derr != nil {
			b.logf("%v", derr)
		}
	}
	b.res.Seconds = time.Since(start).Seconds()
	b.res.Machine.LoadAtEnd = LoadAverage()
	for i := range b.res.Cases {
		finishCase(&b.res.Cases[i], b.contenders)
	}
	b.res.Targets = append(evaluateTargets(b.res.Cases), syncedTargets(b.res)...)
	if err != nil {
		b.res.Error = err.Error()
		return b.res, err
	}
	b.res.Complete = true
	return b.res, nil
}

func (b *bench) logf(format string, args ...any) {
	elapsed := time.Since(b.started).Round(time.Second)
	fmt.Fprintf(b.cfg.Log, "bench [%s]: "+format+"\n", append([]any{elapsed}, args...)...)
}

// Warming up: a fresh broker compiles its hot paths (the JIT's C2 compiler threads) for the
// first few hundred thousand messages a move sends through it. On synced brokers the source
// spent 42, 24, 18 and then 15 s of CPU on four moves of 100,000 x 1 KiB in a row; with a
// warm-up of 5,000 messages the first measured runs of ours and of terraform apply paid for
// the compiling (make bench at 216be1b: 33, 16 and 15 s for ours; 23, 21 and 16 s for apply).
const (
	// warmupMaxMoves bounds the warm-up moves of ours.
	warmupMaxMoves = 8
	// warmupSettled: the warm-up ends when a move's source CPU per message is within this
	// fraction of the move before it.
	warmupSettled = 0.10
)

// warmUp moves n x 1 KiB with our relay until the source broker's CPU per message settles
// (warmupSettled, warmupMaxMoves at most), then once with artemis transfer (its own Core paths).
// Nothing of it is measured in the results but the source CPU of each warm-up move.
func (b *bench) warmUp(ctx context.Context, n int) {
	contenders := b.contenders[:min(2, len(b.contenders))]
	b.logf("warming up the brokers: %d x 1 KiB with %s until the source's CPU per message settles, then with the others (not measured)", n, contenders[0].ID)
	prev := 0.0
	for i := range warmupMaxMoves {
		run := b.runOnce(ctx, Case{Count: n, Size: kib}, contenders[0], 0, nil)
		if ctx.Err() != nil {
			return
		}
		if !run.OK {
			b.logf("warm-up with %s failed: %s", contenders[0].ID, run.Error)
			break
		}
		perMsg := run.SourceCPU * 1e6 / float64(n)
		b.res.WarmupSourceMicros = append(b.res.WarmupSourceMicros, perMsg)
		b.logf("warm-up move %d with %s: %.0f µs/msg of source broker CPU", i+1, contenders[0].ID, perMsg)
		if prev > 0 && perMsg >= prev*(1-warmupSettled) {
			break
		}
		prev = perMsg
	}
	for _, c := range contenders[1:] {
		if run := b.runOnce(ctx, Case{Count: n, Size: kib}, c, 0, nil); !run.OK && ctx.Err() == nil {
			b.logf("warm-up with %s failed: %s", c.ID, run.Error)
		}
	}
}

func (b *bench) run(ctx context.Context) error {
	if err := b.setUp(ctx); err != nil {
		return err
	}
	if n := b.cfg.Profile.WarmupCount; n > 0 {
		b.warmUp(ctx, n)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, size := range b.cfg.Profile.MessageSizes() {
		for _, proto := range b.cfg.PerfProtocols {
			l := b.measureLimit(ctx, size, proto)
			b.res.Limits = append(b.res.Limits, l)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	for _, c := range b.cfg.Profile.Cases {
		cr := CaseResult{Case: c, Name: c.Name()}
		cr.Limit, cr.LimitVia = bestLimit(b.res.Limits, c.Size)
		b.res.Cases = append(b.res.Cases, cr)
		cur := &b.res.Cases[len(b.res.Cases)-1]
		// Repetitions outside, contenders inside, in an order rotated each repetition: drift of
		// a shared machine, and whatever one run leaves the brokers doing, spread over all.
		for rep := 1; rep <= b.cfg.Profile.RepsOf(c); rep++ {
			for i := range b.contenders {
				ct := b.contenders[(i+rep-1)%len(b.contenders)]
				if !c.Runs(ct.ID) {
					continue
				}
				var pre *CaseResult
				if rep == 1 && ct.ID == ContenderOurs {
					pre = cur // the first filled source queue of the case also serves the preflight
				}
				run := b.runOnce(ctx, c, ct, rep, pre)
				cur.Runs = append(cur.Runs, run)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
		finishCase(cur, b.contenders)
		b.logCase(cur)
	}
	for _, c := range b.cfg.Profile.MemoryCases {
		ours := -1
		for i, ct := range b.contenders {
			if ct.ID == ContenderOurs {
				ours = i
			}
		}
		if ours < 0 {
			break // our relay is not among the selected contenders
		}
		b.logf("%s: our relay alone, once (peak memory and preflight at this size)", c.Name())
		cr := CaseResult{Case: c, Name: c.Name(), OursOnly: true}
		cr.Limit, cr.LimitVia = bestLimit(b.res.Limits, c.Size)
		b.res.Cases = append(b.res.Cases, cr)
		cur := &b.res.Cases[len(b.res.Cases)-1]
		cur.Runs = append(cur.Runs, b.runOnce(ctx, c, b.contenders[ours], 1, cur))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		finishCase(cur, b.contenders)
		b.logCase(cur)
	}
	if n := b.cfg.Profile.BreakdownCount; n > 0 {
		b.logf("where the brokers' CPU goes: the parts of a move of %d x 1 KiB, each on its own", n)
		b.res.Breakdown = b.measureBreakdown(ctx, n)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if n := b.cfg.Profile.DepthCount; n > 0 {
		b.logf("the target's store as its queue deepens: %d x 1 KiB, with and without duplicate ids", n)
		idle := 0.0
		if b.res.Breakdown != nil {
			idle = b.res.Breakdown.IdleTargetPerSec
		}
		b.res.Depth = b.measureDepth(ctx, n, idle)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if n := b.cfg.Profile.ResumeCount; n > 0 {
		b.logf("resume: %d x 1 KiB, our relay killed mid-relay and resumed, %s", n, plural(b.cfg.Profile.Reps, "time"))
		b.res.Resume = b.measureResume(ctx, n)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// setUp builds the clients and reads versions, the CLI's defaults and the brokers' pids.
func (b *bench) setUp(ctx context.Context) error {
	env := b.cfg.Env
	src, ok1 := env.Brokers["source"]
	tgt, ok2 := env.Brokers["target"]
	if !ok1 || !ok2 {
		return errors.New("the test environment has no source and target broker")
	}
	admin := func(br testenv.Broker) BrokerAccess {
		return BrokerAccess{Name: br.Name, AMQPURL: br.AMQPURL, ManagementURL: br.ManagementURL, Username: env.AdminUser, Password: env.AdminPassword}
	}
	b.srcAccess, b.tgtAccess = admin(src), admin(tgt)
	var err error
	if b.srcAdmin, err = b.srcAccess.client(); err != nil {
		return err
	}
	if b.tgtAdmin, err = b.tgtAccess.client(); err != nil {
		return err
	}
	if b.cfg.RelayUser != "admin" {
		b.srcAccess.Username, b.srcAccess.Password = env.TransferUser, env.TransferPassword
		b.tgtAccess.Username, b.tgtAccess.Password = env.TransferUser, env.TransferPassword
		b.res.RelayUser = "transfer"
	}
	b.srcURLs = BrokerURLs{Core: src.CoreURL, AMQP: src.AMQPURL}
	b.tgtURLs = BrokerURLs{Core: tgt.CoreURL, AMQP: tgt.AMQPURL}
	b.cli = ArtemisCLI{Home: env.ArtemisHome, User: env.AdminUser, Password: env.AdminPassword, Log: io.Discard}

	b.res.Machine = ReadMachine(ctx, b.cfg.RepoDir)
	info, err := b.srcAdmin.BrokerInfo(ctx)
	if err != nil {
		return fmt.Errorf("reading the source broker's version: %w", err)
	}
	b.res.Machine.Artemis = info.Version
	if b.res.TransferDefaultCommit, err = b.cli.TransferDefaultCommit(ctx); err != nil {
		return err
	}
	all := Contenders(b.res.TransferDefaultCommit, b.cfg.TunedCommit)
	for _, c := range all {
		if len(b.cfg.Contenders) == 0 || contains(b.cfg.Contenders, c.ID) {
			b.contenders = append(b.contenders, c)
		}
	}
	if b.cfg.ProviderDir != "" && (len(b.cfg.Contenders) == 0 || contains(b.cfg.Contenders, ContenderApply)) {
		b.contenders = append(b.contenders, Contender{ID: ContenderApply, Label: "ours (terraform apply)", Tool: ToolTerraform})
	}
	if len(b.contenders) == 0 {
		return fmt.Errorf("no contender left after selecting %v", b.cfg.Contenders)
	}
	b.res.Contenders = b.contenders
	for _, c := range b.contenders {
		if c.Copy && b.ledger == nil {
			if env.PostgresDSN == "" {
				return errors.New("the copy contender needs a ledger, and the test environment has no postgres_dsn")
			}
			if b.ledger, err = harness.CreateDatabase(ctx, env.PostgresDSN, "bench"); err != nil {
				return fmt.Errorf("the copy contender's ledger: %w", err)
			}
		}
	}
	if b.sourcePID, err = brokerPID(env.StateDir, "source"); err != nil {
		return err
	}
	if b.targetPID, err = brokerPID(env.StateDir, "target"); err != nil {
		return err
	}
	return nil
}

// brokerPID reads a broker's pid file, as scripts/testenv.sh writes it.
func brokerPID(stateDir, name string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(stateDir, "brokers", name+".pid"))
	if err != nil {
		return 0, fmt.Errorf("reading the pid of broker %s: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return 0, fmt.Errorf("the pid file of broker %s holds %q", name, raw)
	}
	if _, err := ProcessCPU(pid); err != nil {
		return 0, fmt.Errorf("broker %s (pid %d) is not running: %w", name, pid, err)
	}
	return pid, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// queueNames names a run's queues: unique, so that nothing of an earlier run (or a failed one
// left behind) is ever counted.
func (b *bench) queueNames(c Case, ct Contender, rep int) (src, tgt, tag string) {
	tag = b.uniqueTag(fmt.Sprintf("%s-%s-r%d-", c.Slug(), ct.ID, rep))
	return "bench." + tag + ".src", "bench." + tag + ".tgt", tag
}

// runQueue is a benchmark queue: durable, anycast on its own address, no limits.
func runQueue(name string) artemis.QueueSpec {
	return artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: -1}
}

// uniqueTag is prefix followed by the time of day in base 36 and this process's sequence
// number: names of queues and messages that no other run on the brokers shares.
func (b *bench) uniqueTag(prefix string) string {
	b.seq++
	return prefix + strconv.FormatInt(time.Now().UnixMilli()%1_000_000, 36) + strconv.Itoa(b.seq)
}

// createRunQueues creates a run's source queue on the source broker and its target queue on the
// target broker.
func (b *bench) createRunQueues(ctx context.Context, srcQ, tgtQ string) error {
	if err := b.srcAdmin.CreateQueue(ctx, runQueue(srcQ), false); err != nil {
		return err
	}
	return b.tgtAdmin.CreateQueue(ctx, runQueue(tgtQ), false)
}

// runTimeout bounds one move: generous for this machine (our relay did 2,000-3,500 msg/s of
// 1 KiB when this was written), so only a hang reaches it.
func runTimeout(c Case) time.Duration {
	return 2*time.Minute + time.Duration(c.Count/200)*time.Second + time.Duration(c.Bytes()/(2<<20))*time.Second
}

// runOnce fills a fresh source queue, moves it with one contender, and checks the target.
// pre, when set, also gets the preflight measured on the filled queue before the move.
func (b *bench) runOnce(ctx context.Context, c Case, ct Contender, rep int, pre *CaseResult) Trial {
	run := Trial{Contender: ct.ID, Rep: rep}
	began := time.Now()
	srcQ, tgtQ, tag := b.queueNames(c, ct, rep)
	fail := func(err error) Trial {
		run.OK, run.Error = false, err.Error()
		b.logf("%s rep %d %s: FAILED: %v", c.Name(), rep, ct.ID, err)
		return run
	}
	if err := b.createRunQueues(ctx, srcQ, tgtQ); err != nil {
		return fail(err)
	}
	defer b.dropQueues(ctx, srcQ, tgtQ)
	fill, err := b.fill(ctx, c, srcQ, tag)
	if err != nil {
		return fail(err)
	}
	run.Fill = fill
	q, err := b.srcAdmin.Queue(ctx, srcQ)
	if err != nil {
		return fail(fmt.Errorf("counting the filled source queue: %w", err))
	}
	if q.MessageCount != int64(c.Count) {
		return fail(fmt.Errorf("the filled source queue holds %d messages, want %d", q.MessageCount, c.Count))
	}
	spec := transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "source", Queue: srcQ},
		Target: transfer.Endpoint{Broker: "target", Queue: tgtQ}}
	ledgerDSN := ""
	if ct.Copy {
		spec.Mode, ledgerDSN = transfer.ModeCopy, b.ledger.DSN
	}
	if pre != nil {
		b.measurePreflight(ctx, spec, pre)
	}

	stopSampling := func() []Sample { return nil }
	if from := b.cfg.SampleFrom; c.Count >= sampleFrom || (from > 0 && c.Count >= from) {
		prefix := ""
		if ct.Tool != ToolArtemisTransfer {
			prefix = stagingPrefixOf(spec)
		}
		stopSampling = b.sampleMove(ctx, srcQ, tgtQ, prefix)
	}
	src0, tgt0 := b.brokerCPU()
	switch ct.Tool {
	case ToolRelay:
		pr, child, err := runRelay(ctx, b.srcAccess, b.tgtAccess, spec, ledgerDSN, b.cfg.RelayTuning, runTimeout(c), c.Size >= memoryDetailFrom, b.cfg.Log)
		run.Process = pr
		times := child.Times
		run.Relay = &times
		run.Waits, run.Requests = child.Waits, child.Requests
		if err != nil {
			b.removeStaging(ctx, spec)
			run.Error = err.Error()
		}
	case ToolTerraform:
		pr, err := b.apply(ctx, spec, runTimeout(c))
		run.Process = pr
		if err != nil {
			b.removeStaging(ctx, spec)
			run.Error = err.Error()
		}
	case ToolArtemisTransfer:
		args := b.cli.TransferArgs(ct, b.srcURLs, b.tgtURLs, srcQ, tgtQ, c.Count)
		run.CommandLine = b.cli.CommandLine(args)
		b.res.CommandLines[ct.ID] = b.cli.CommandLine(placeholders(args, map[string]string{
			"--source-queue": "<source-queue>", "--target-queue": "<target-queue>", "--message-count": "<count>"}))
		runCtx, cancel := context.WithTimeout(ctx, runTimeout(c))
		pr, moved, err := b.cli.Transfer(runCtx, args)
		cancel()
		run.Process = pr
		if err == nil && moved != int64(c.Count) {
			err = fmt.Errorf("artemis transfer reports %d messages moved, want %d", moved, c.Count)
		}
		if err != nil {
			run.Error = err.Error()
		}
	}
	src1, tgt1 := b.brokerCPU()
	run.SourceCPU, run.TargetCPU = (src1 - src0).Seconds(), (tgt1 - tgt0).Seconds()
	run.Samples = stopSampling()
	if w := run.Process.WallSeconds; w > 0 {
		run.MsgsPerSec = float64(c.Count) / w
		run.MiBPerSec = float64(c.Bytes()) / float64(mib) / w
	}

	prefix := ""
	if ct.Tool == ToolRelay || ct.Tool == ToolTerraform {
		prefix = stagingPrefixOf(spec)
	}
	verify := Verify
	if ct.Copy {
		verify = VerifyCopy
	}
	check, err := verify(ctx, b.srcAdmin, b.tgtAdmin, srcQ, tgtQ, c.Count, c.Size, tag, prefix)
	run.Check = check
	if err != nil {
		return fail(fmt.Errorf("checking the run: %w (run error: %s)", err, run.Error))
	}
	switch {
	case run.Error != "":
		return fail(fmt.Errorf("%s (check: %s)", run.Error, orOK(check.Problem)))
	case !check.OK:
		return fail(errors.New("lost or doubled messages: " + check.Problem))
	}
	run.OK = true
	extra := ""
	if run.Relay != nil {
		extra = fmt.Sprintf(", staging %.2fs, relay %.2fs", run.Relay.Staging, run.Relay.Relay)
	}
	b.logf("%s rep %d %-22s %8.0f msg/s %7.1f MiB/s, %.2fs%s, peak RSS %.1f MiB, broker CPU %.1fs+%.1fs, ok (fill %.1fs, all %.0fs)",
		c.Name(), rep, ct.ID, run.MsgsPerSec, run.MiBPerSec, run.Process.WallSeconds, extra,
		float64(run.Process.PeakRSSKiB)/1024, run.SourceCPU, run.TargetCPU, run.Fill.Seconds, time.Since(began).Seconds())
	return run
}

// fill fills a run's source queue with the case's producer.
func (b *bench) fill(ctx context.Context, c Case, queue, tag string) (harness.FillResult, error) {
	if c.Producer == ProducerOurs {
		return harness.Fill(ctx, b.srcAdmin, queue, c.Count, c.Size, tag)
	}
	args := b.cli.ProducerArgs(b.srcURLs.forProtocol(string(c.Producer)), string(c.Producer), queue, c.Count, c.Size, tag)
	b.res.CommandLines["fill-"+string(c.Producer)] = b.cli.CommandLine(placeholders(args, map[string]string{
		"--message-count": "<count>", "--message-size": "<size>", "--properties": "<tag>"}))
	return b.cli.Produce(ctx, args, c.Count)
}

// placeholders replaces the values of the given flags, and a queue://name destination, so that
// a command line shown in the report stands for every run of its kind rather than one run's.
func placeholders(args []string, byFlag map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && byFlag[args[i-1]] != "":
			a = byFlag[args[i-1]]
		case strings.HasPrefix(a, "queue://"):
			a = "queue://<queue>"
		}
		out[i] = a
	}
	return out
}

func orOK(problem string) string {
	if problem == "" {
		return "no loss or duplicate"
	}
	return problem
}

// brokerCPU reads both brokers' CPU time; a broker that cannot be read counts as 0, logged.
func (b *bench) brokerCPU() (source, target time.Duration) {
	var err error
	if source, err = ProcessCPU(b.sourcePID); err != nil {
		b.logf("source broker CPU: %v", err)
	}
	if target, err = ProcessCPU(b.targetPID); err != nil {
		b.logf("target broker CPU: %v", err)
	}
	return source, target
}

// dropQueues removes a run's queues (an empty name: none on that broker) with whatever they
// still hold.
func (b *bench) dropQueues(ctx context.Context, srcQ, tgtQ string) {
	dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for _, q := range []struct {
		c    *artemis.Client
		name string
	}{{b.srcAdmin, srcQ}, {b.tgtAdmin, tgtQ}} {
		if q.name == "" {
			continue
		}
		if err := q.c.DestroyQueue(dropCtx, q.name); err != nil && !errors.Is(err, artemis.ErrNotFound) {
			b.logf("removing %s on broker %q: %v", q.name, q.c.Name(), err)
		}
	}
}

// removeStaging deletes what a failed relay left on the source, so that it does not weigh on
// the runs after it.
func (b *bench) removeStaging(ctx context.Context, spec transfer.Spec) {
	dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	queues, err := b.srcAdmin.ListQueues(dropCtx, stagingPrefixOf(spec))
	if err != nil {
		b.logf("looking for staging of a failed run: %v", err)
		return
	}
	for _, q := range queues {
		if err := b.srcAdmin.DestroyQueue(dropCtx, q.Name); err != nil && !errors.Is(err, artemis.ErrNotFound) {
			b.logf("removing staging queue %s: %v", q.Name, err)
		}
	}
}

// preflightRuns is how many times the preflight is timed per case.
const preflightRuns = 3

// measurePreflight times Engine.Preflight with fresh clients each time, as a `terraform plan`
// (a new provider process) has them, against the filled source queue.
func (b *bench) measurePreflight(ctx context.Context, spec transfer.Spec, cr *CaseResult) {
	for i := 0; i < preflightRuns; i++ {
		src, err := b.srcAccess.client()
		if err != nil {
			cr.PreflightError = err.Error()
			return
		}
		tgt, err := b.tgtAccess.client()
		if err != nil {
			cr.PreflightError = err.Error()
			return
		}
		e := &transfer.Engine{Source: src, Target: tgt}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		start := time.Now()
		findings, err := e.Preflight(pctx, spec)
		took := time.Since(start)
		cancel()
		if err != nil {
			cr.PreflightError = err.Error()
			b.logf("%s: preflight: %v", cr.Name, err)
			return
		}
		for _, f := range findings {
			if f.Severity == preflight.Error {
				cr.PreflightError = f.Summary + ": " + f.Detail
			}
		}
		cr.PreflightSeconds = append(cr.PreflightSeconds, took.Seconds())
	}
	b.logf("%s: preflight %v s", cr.Name, roundAll(cr.PreflightSeconds))
}

func roundAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(int(x*1000+0.5)) / 1000
	}
	return out
}

// perfMaxPending bounds the unconfirmed messages of `artemis perf producer` by bytes, as our
// relay bounds its in-flight bytes: up to 1000 small messages, a few large ones.
func perfMaxPending(size int) int { return max(1, min(1000, (32<<20)/max(size, 1))) }

// measureLimit measures the brokers' raw rate for one message size and protocol: durable
// produce on the target, then consume on the source of a queue filled by a perf producer.
func (b *bench) measureLimit(ctx context.Context, size int, protocol string) Limit {
	l := Limit{Size: size, Protocol: protocol}
	secs := b.cfg.Profile.PerfSeconds
	for rep := 1; rep <= b.cfg.Profile.PerfReps && ctx.Err() == nil; rep++ {
		b.seq++
		queue := fmt.Sprintf("bench.perf.s%d.%s.r%d.%d", size, strings.ToLower(protocol), rep, b.seq)
		produce, err := b.perfProduce(ctx, b.tgtAdmin, b.tgtURLs, queue, protocol, size, secs, "perf-producer-target")
		if err != nil {
			l.Errors = append(l.Errors, err.Error())
			b.logf("limit %s %s: %v", harness.SizeName(size), protocol, err)
			continue
		}
		l.ProduceTarget = append(l.ProduceTarget, produce)
		consume, err := b.perfConsume(ctx, queue, protocol, size, secs)
		if err != nil {
			l.Errors = append(l.Errors, err.Error())
			b.logf("limit %s %s: %v", harness.SizeName(size), protocol, err)
			continue
		}
		l.ConsumeSource = append(l.ConsumeSource, consume)
		b.logf("limit %s %s rep %d: target produces %.0f msg/s durable, source consumes %.0f msg/s",
			harness.SizeName(size), protocol, rep, produce.MsgsPerSec, consume.MsgsPerSec)
	}
	rates := func(rs []PerfRate) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = r.MsgsPerSec
		}
		return out
	}
	l.ProduceTargetMsgs, l.ConsumeSourceMsgs = Median(rates(l.ProduceTarget)), Median(rates(l.ConsumeSource))
	if l.ProduceTargetMsgs > 0 && l.ConsumeSourceMsgs > 0 {
		l.MsgsPerSec = min(l.ProduceTargetMsgs, l.ConsumeSourceMsgs)
	}
	return l
}

// perfProduce runs a durable perf producer into a fresh queue of one broker and returns its rate.
func (b *bench) perfProduce(ctx context.Context, c *artemis.Client, urls BrokerURLs, queue, protocol string, size, secs int, what string) (PerfRate, error) {
	if err := c.CreateQueue(ctx, artemis.QueueSpec{Name: queue, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
		return PerfRate{}, err
	}
	report := filepath.Join(b.cfg.WorkDir, queue+"."+what+".json")
	args := b.cli.PerfProducerArgs(urls.forProtocol(protocol), protocol, queue, size, perfMaxPending(size), secs, report)
	b.res.CommandLines[what+"-"+strings.ToLower(protocol)] = b.cli.CommandLine(placeholders(args, map[string]string{
		"--json": "<report.json>", "--message-size": "<size>", "--max-pending": "<max-pending>"}))
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+3*time.Minute)
	defer cancel()
	rate, err := b.cli.Perf(runCtx, args, report, b.cfg.Profile.PerfSkip)
	if c == b.tgtAdmin {
		b.dropQueues(ctx, "", queue)
	}
	return rate, err
}

// perfConsume fills a fresh source queue with a perf producer (not measured as a limit), then
// times a perf consumer taking all of it.
func (b *bench) perfConsume(ctx context.Context, queue, protocol string, size, secs int) (PerfRate, error) {
	defer b.dropQueues(ctx, queue, "")
	if _, err := b.perfProduce(ctx, b.srcAdmin, b.srcURLs, queue, protocol, size, secs, "perf-producer-source"); err != nil {
		return PerfRate{}, err
	}
	q, err := b.srcAdmin.Queue(ctx, queue)
	if err != nil {
		return PerfRate{}, err
	}
	if q.MessageCount == 0 {
		return PerfRate{}, fmt.Errorf("the perf producer left no message on %s", queue)
	}
	report := filepath.Join(b.cfg.WorkDir, queue+".perf-consumer-source.json")
	args := b.cli.PerfConsumerArgs(b.srcURLs.forProtocol(protocol), protocol, queue, q.MessageCount, report)
	b.res.CommandLines["perf-consumer-source-"+strings.ToLower(protocol)] = b.cli.CommandLine(placeholders(args, map[string]string{
		"--json": "<report.json>", "--message-count": "<messages-on-the-queue>"}))
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+3*time.Minute)
	defer cancel()
	return b.cli.Perf(runCtx, args, report, b.cfg.Profile.PerfSkip)
}

// logCase prints a case's medians.
func (b *bench) logCase(cr *CaseResult) {
	for _, s := range cr.Summary {
		b.logf("%s %-22s median %8.0f msg/s (%d/%d correct)", cr.Name, s.Contender, s.MsgsPerSec, s.OKRuns, s.Runs)
	}
	b.logf("%s: ours vs transfer default %.2fx, vs best transfer %.2fx, vs limit %.0f%%", cr.Name,
		cr.Ratios.VsTransferDefault, cr.Ratios.VsBestTransfer, 100*cr.Ratios.VsLimit)
	if cr.Ratios.CopyVsMove > 0 {
		b.logf("%s: copy vs move %.0f%%", cr.Name, 100*cr.Ratios.CopyVsMove)
	}
}
