// Package faults is the fault harness of `make faults`: seeded iterations of a transfer run by
// the real terraform CLI over real brokers, one fault each, a recovery as an operator would do
// it (apply again, a bounded number of times), and a checker that counts every message by its
// unique producer id afterwards. Its results regenerate the docs page of fault-tolerance
// figures.
package faults

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/bench"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// Config is one harness run.
type Config struct {
	Env     *testenv.Env
	Profile Profile
	// RunSeed draws the iterations' seeds (Schedule). Replay, when not nil, runs only that one
	// iteration instead.
	RunSeed uint64
	Replay  *Plan
	// Only, with a profile: the kinds to run, in turn (nil: every kind). Iterations, when not
	// 0, replaces the profile's number of iterations.
	Only       []Kind
	Iterations int
	// ProviderDir holds the built terraform-provider-artemis; Terraform is the CLI to run.
	ProviderDir, Terraform string
	WorkDir                string // per-iteration terraform folders
	// ApplyTimeout bounds one apply (also its timeouts.create); MaxApplies the applies of one
	// iteration, the first included; Deadline the whole run (iterations not begun by then are
	// left out, and the results say so).
	ApplyTimeout time.Duration
	MaxApplies   int
	Deadline     time.Time
	Log          io.Writer
	// TerraformLog, when not nil, receives terraform's output.
	TerraformLog io.Writer
}

// Iteration is what one iteration did and found.
type Iteration struct {
	Plan
	Index       int    `json:"index"`
	SourceQueue string `json:"source_queue"`
	TargetQueue string `json:"target_queue"`
	// Injected says the fault landed while the first apply ran; InjectedAt is when, in seconds
	// after it started, and at how many messages on the target.
	Injected       bool    `json:"injected"`
	InjectedAt     float64 `json:"injected_at_s"`
	InjectedTarget int64   `json:"injected_at_target"`
	Applies        int     `json:"applies"`
	Recovered      bool    `json:"recovered"`
	// RecoverySeconds is from the fault to the end of the first successful apply.
	RecoverySeconds float64 `json:"recovery_s"`
	Counts
	StagingQueuesLeft int      `json:"staging_queues_left"`
	Notes             []string `json:"notes,omitempty"`
	OK                bool     `json:"ok"`
	Problem           string   `json:"problem,omitempty"`
	Seconds           float64  `json:"seconds"`
}

// harness is a run in progress.
type harness struct {
	cfg     Config
	cli     string // TF_CLI_CONFIG_FILE
	admin   map[string]*artemis.Client
	proxies map[string]*testenv.Proxy
	holder  string // the source queue the management-lock holder moves back and forth
	started time.Time
	// ledgerDB and ledgerDSN: the database the run's copies record in, created for the run on
	// the environment's PostgreSQL when a copy kind is planned, and dropped at the end.
	ledgerDB, ledgerDSN string
}

// The brokers the harness uses.
const (
	brSource = "source"
	brTarget = "target"
	brNode1  = "node1"
	brNode2  = "node2"
)

// Planned is the number of iterations the run is to make.
func (c Config) Planned() int {
	switch {
	case c.Replay != nil:
		return 1
	case c.Iterations > 0:
		return c.Iterations
	}
	return c.Profile.Iterations(c.Only)
}

// Run runs the iterations and returns their results. It stops at the deadline or when ctx
// ends, returning what ran.
func Run(ctx context.Context, cfg Config) ([]Iteration, error) {
	if err := cfg.Env.Owned(); err != nil {
		return nil, fmt.Errorf("the fault harness kills and restarts brokers: %w", err)
	}
	h := &harness{cfg: cfg, admin: map[string]*artemis.Client{}, proxies: map[string]*testenv.Proxy{}, started: time.Now()}
	defer h.close()
	plans := []Plan{}
	if cfg.Replay != nil {
		plans = append(plans, *cfg.Replay)
	} else {
		plans = Schedule(cfg.RunSeed, cfg.Planned(), cfg.Only)
	}
	if err := h.setUp(ctx, plans); err != nil {
		return nil, err
	}
	for _, p := range plans {
		if p.Kind == ManagementBusy {
			// Filled before the first apply, so that its fill does not compete with one.
			setupCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			err := h.lockHolder(setupCtx)
			cancel()
			if err != nil {
				return nil, err
			}
			break
		}
	}
	var out []Iteration
	for i, p := range plans {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		if !cfg.Deadline.IsZero() && time.Now().After(cfg.Deadline) {
			h.logf("deadline reached: %d of %d iterations ran", len(out), len(plans))
			return out, nil
		}
		plan := NewPlan(p.Seed, p.Kind, cfg.Profile.MinCount, cfg.Profile.MaxCount)
		if cfg.Replay != nil {
			plan = *cfg.Replay
		}
		it := h.iteration(ctx, i+1, len(plans), plan)
		out = append(out, it)
		status := "ok"
		if !it.OK {
			status = "FAILED: " + it.Problem
		}
		if plan.Kind.Copies() {
			h.logf("iteration %d/%d seed=%d kind=%s (copy): %d messages, lost %d, doubled %d, unexpected %d, source changed %d, staging queues %d, %d applies, recovery %.1f s, %.0f s: %s",
				i+1, len(plans), plan.Seed, plan.Kind, plan.Count, it.Lost, it.Doubled, it.Unexpected, it.SourceChanged, it.StagingQueuesLeft,
				it.Applies, it.RecoverySeconds, it.Seconds, status)
			continue
		}
		h.logf("iteration %d/%d seed=%d kind=%s: %d messages, lost %d, doubled %d, unexpected %d, in staging %d, left on source %d, %d applies, recovery %.1f s, %.0f s: %s",
			i+1, len(plans), plan.Seed, plan.Kind, plan.Count, it.Lost, it.Doubled, it.Unexpected, it.InStaging, it.LeftSource,
			it.Applies, it.RecoverySeconds, it.Seconds, status)
	}
	return out, nil
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(h.cfg.Log, "faults [%s]: "+format+"\n", append([]any{time.Since(h.started).Round(time.Second)}, args...)...)
}

func (h *harness) setUp(ctx context.Context, plans []Plan) error {
	env := h.cfg.Env
	if slices.ContainsFunc(plans, func(p Plan) bool { return p.Kind.Copies() }) {
		if env.PostgresDSN == "" {
			return fmt.Errorf("the copy fault kinds need the test environment's PostgreSQL, and %s has no postgres_dsn", testenv.FilePath())
		}
		dbCtx, cancel := context.WithTimeout(ctx, time.Minute)
		name, dsn, err := createLedgerDatabase(dbCtx, env.PostgresDSN)
		cancel()
		if err != nil {
			return err
		}
		h.ledgerDB, h.ledgerDSN = name, dsn
		h.logf("copies record in ledger database %s", name)
	}
	for _, name := range []string{brSource, brTarget, brNode1, brNode2} {
		b, ok := env.Brokers[name]
		if !ok {
			if name == brNode1 || name == brNode2 {
				continue // no cluster: the failover kind is refused when it comes
			}
			return fmt.Errorf("the test environment has no %s broker", name)
		}
		c, err := artemis.New(artemis.Config{Name: name, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
			Username: env.AdminUser, Password: env.AdminPassword, RequestTimeout: 70 * time.Second})
		if err != nil {
			return fmt.Errorf("admin client for %s: %w", name, err)
		}
		h.admin[name] = c
	}
	for _, name := range []string{brSource, brTarget} {
		u, err := url.Parse(env.Brokers[name].AMQPURL)
		if err != nil {
			return fmt.Errorf("the %s broker's AMQP URL: %w", name, err)
		}
		p, err := testenv.StartProxy(u.Host)
		if err != nil {
			return err
		}
		h.proxies[name] = p
	}
	if err := os.MkdirAll(h.cfg.WorkDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", h.cfg.WorkDir, err)
	}
	cli, err := WriteCLIConfig(h.cfg.WorkDir, h.cfg.ProviderDir)
	if err != nil {
		return err
	}
	h.cli = cli
	return nil
}

func (h *harness) close() {
	for _, p := range h.proxies {
		p.Close()
	}
	if h.ledgerDB != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := dropLedgerDatabase(ctx, h.cfg.Env.PostgresDSN, h.ledgerDB); err != nil {
			h.logf("%v", err)
		}
	}
	if h.holder != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, q := range []string{h.holder, h.holder + ".b"} {
			_ = h.admin[brSource].DestroyQueue(ctx, q)
		}
	}
}

// iteration runs one plan: set up, first apply with the fault, recovery, check, clean up.
func (h *harness) iteration(ctx context.Context, index, total int, plan Plan) (it Iteration) {
	start := time.Now()
	// Printed first, so that a run that hangs or crashes still says how to replay it.
	// The profile is part of the replay: it bounds the message count the seed draws from.
	h.logf("iteration %d/%d seed=%d kind=%s (replay: SEED=%d KIND=%s make faults PROFILE=%s)", index, total, plan.Seed, plan.Kind,
		plan.Seed, plan.Kind, h.cfg.Profile.Name)
	it = Iteration{Plan: plan, Index: index}
	defer func() { it.Seconds = time.Since(start).Seconds() }()
	fail := func(format string, args ...any) Iteration {
		it.Problem = fmt.Sprintf(format, args...)
		return it
	}
	targetName := brTarget
	if plan.Kind == FailoverTarget {
		if h.admin[brNode1] == nil || h.admin[brNode2] == nil {
			return fail("the failover fault needs the cluster nodes: start the environment with `up --cluster`")
		}
		targetName = brNode1
	}
	src, tgt := h.admin[brSource], h.admin[targetName]
	it.SourceQueue = testenv.UniqueName("faults.src")
	it.TargetQueue = testenv.UniqueName("faults.tgt")
	tag := fmt.Sprintf("f%d", plan.Seed)

	setupCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := src.CreateQueue(setupCtx, artemis.QueueSpec{Name: it.SourceQueue, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
		return fail("creating the source queue: %v", err)
	}
	targets := []*artemis.Client{tgt}
	if plan.Kind == FailoverTarget {
		// The queue exists on both nodes, as it would on a cluster: a copy written to node2
		// is kept there, where the checker finds it.
		targets = append(targets, h.admin[brNode2])
	}
	for _, c := range targets {
		if err := c.CreateQueue(setupCtx, artemis.QueueSpec{Name: it.TargetQueue, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
			return fail("creating the target queue on %s: %v", c.Name(), err)
		}
	}
	if plan.Kind == TargetFull {
		if err := tgt.AddAddressSettings(setupCtx, it.TargetQueue, map[string]any{"maxSizeBytes": int64(256 << 10), "pageSizeBytes": int64(64 << 10), "addressFullMessagePolicy": "BLOCK"}); err != nil {
			return fail("making the target address small: %v", err)
		}
	}
	defer h.cleanUp(it.SourceQueue, it.TargetQueue, targets, plan.Kind == TargetFull)
	if _, err := bench.Fill(setupCtx, src, it.SourceQueue, plan.Count, MessageSize, tag); err != nil {
		return fail("%v", err)
	}
	var stagingBefore map[string][]string
	if plan.Kind.Copies() {
		var err error
		if stagingBefore, err = stagingQueues(setupCtx, []*artemis.Client{src, tgt}); err != nil {
			return fail("%v", err)
		}
	}

	ws, err := h.workspace(index, plan, it.SourceQueue, it.TargetQueue)
	if err != nil {
		return fail("%v", err)
	}
	tally := NewTally(tag, plan.Count)
	if plan.Kind.Copies() {
		if err := browseOrder(setupCtx, src, it.SourceQueue, plan.Count, tally); err != nil {
			return fail("%v", err)
		}
	}
	h.run(ctx, ws, plan, tgt, tally, &it)

	checkCtx, cancelCheck := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelCheck()
	var problems []string
	if it.Problem != "" {
		problems = append(problems, it.Problem)
	}
	if !it.Recovered {
		problems = append(problems, fmt.Sprintf("no apply succeeded in %d tries", it.Applies))
	}
	if plan.Kind.Copies() {
		if err := h.checkCopy(checkCtx, src, tgt, it.SourceQueue, it.TargetQueue, stagingBefore, tally, &it); err != nil {
			return fail("checker: %v", err)
		}
		it.Counts = tally.CopyCounts()
		note, problem, err := h.checkLedger(checkCtx, &it)
		if err != nil {
			return fail("checker: reading the ledger: %v", err)
		}
		it.Notes = append(it.Notes, note)
		problems = append(problems, copyProblems(it)...)
		if problem != "" {
			problems = append(problems, problem)
		}
		it.Problem = strings.Join(problems, "; ")
		it.OK = it.Problem == ""
		return it
	}
	if err := h.check(checkCtx, src, targets, it.SourceQueue, it.TargetQueue, tally, &it); err != nil {
		return fail("checker: %v", err)
	}
	it.Counts = tally.Counts()
	if it.Lost > 0 {
		problems = append(problems, fmt.Sprintf("%d lost", it.Lost))
	}
	if it.Doubled > 0 {
		problems = append(problems, fmt.Sprintf("%d doubled", it.Doubled))
	}
	if it.Unexpected > 0 {
		problems = append(problems, fmt.Sprintf("%d unexpected", it.Unexpected))
	}
	if it.InStaging > 0 || it.StagingQueuesLeft > 0 {
		problems = append(problems, fmt.Sprintf("%d messages in %d staging queues left", it.InStaging, it.StagingQueuesLeft))
	}
	if it.Recovered && it.LeftSource > 0 {
		problems = append(problems, fmt.Sprintf("%d messages left on the source after a successful apply", it.LeftSource))
	}
	it.Problem = strings.Join(problems, "; ")
	it.OK = it.Problem == ""
	return it
}

// workspace writes the iteration's terraform configuration. The relay reaches the source and
// target brokers through the harness's proxies; the failover kind names both cluster nodes.
func (h *harness) workspace(index int, plan Plan, srcQueue, tgtQueue string) (*Workspace, error) {
	env := h.cfg.Env
	key := func(name string, amqpURLs ...string) BrokerKey {
		return BrokerKey{AMQPURLs: amqpURLs, ManagementURL: env.Brokers[name].ManagementURL,
			Username: env.TransferUser, Password: env.TransferPassword}
	}
	source := key(brSource, "amqp://"+h.proxies[brSource].Addr())
	target := key(brTarget, "amqp://"+h.proxies[brTarget].Addr())
	if plan.Kind == FailoverTarget {
		target = key(brNode1, env.Brokers[brNode1].AMQPURL, env.Brokers[brNode2].AMQPURL)
	}
	dir := filepath.Join(h.cfg.WorkDir, fmt.Sprintf("iteration-%03d-%s", index, plan.Kind))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tc := transferConfig{Source: source, Target: target, SourceQueue: srcQueue, TargetQueue: tgtQueue, Create: h.cfg.ApplyTimeout}
	if plan.Kind.Copies() {
		tc.LedgerDSN = h.ledgerDSN
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tc.String()), 0o600); err != nil {
		return nil, fmt.Errorf("writing the iteration's configuration: %w", err)
	}
	return &Workspace{Dir: dir, CLIConfig: h.cli, Terraform: h.cfg.Terraform, Log: h.cfg.TerraformLog}, nil
}

// run is the first apply with its fault, then the operator's recovery: apply again, up to
// MaxApplies in all.
func (h *harness) run(ctx context.Context, ws *Workspace, plan Plan, target *artemis.Client, tally *Tally, it *Iteration) {
	// The apply is bounded by timeouts.create; the harness kills it a minute later if not.
	applyLimit := h.cfg.ApplyTimeout + time.Minute
	apply, err := ws.StartApply(ctx, applyLimit)
	if err != nil {
		it.Problem = err.Error()
		return
	}
	it.Applies = 1
	var faultAt time.Time
	var f *fault
	background, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	var bg sync.WaitGroup
	defer bg.Wait()

	reached, n := h.waitForTrigger(ctx, apply, plan, target, it.TargetQueue)
	if reached {
		faultAt = time.Now()
		it.Injected = true
		it.InjectedAt = faultAt.Sub(apply.started).Seconds()
		it.InjectedTarget = n
		var err error
		f, err = h.inject(background, &bg, apply, plan, it.TargetQueue, target, tally)
		if err != nil {
			it.Notes = append(it.Notes, "injecting the fault: "+err.Error())
		}
		if f.note != "" {
			it.Notes = append(it.Notes, f.note)
		}
	} else {
		it.Notes = append(it.Notes, fmt.Sprintf("the first apply ended before the target held %d messages: the fault was not injected", plan.TriggerAt))
	}
	err = apply.Wait()
	if f != nil {
		<-f.done // a broker restarted, a stall ended, a lock released: as an operator sees it
		if f.err != nil {
			it.Problem = "ending the fault: " + f.err.Error()
		}
		if f.orphan > 0 {
			it.Notes = append(it.Notes, h.orphanNote(f.orphan))
		}
	}
	for err != nil && it.Applies < h.cfg.MaxApplies && ctx.Err() == nil {
		h.logf("apply %d failed: %v", it.Applies, err)
		it.Notes = append(it.Notes, fmt.Sprintf("apply %d: %s", it.Applies, firstErrorLine(apply.Output())))
		pause := 2 * time.Second
		if lapse, ok := leaseLapse(apply.Output()); ok {
			// Refused while a killed process's lease lasts: the error says until when, and an
			// operator who reads it applies again then.
			pause = min(max(time.Until(lapse)+time.Second, pause), maxLeaseWait)
			it.Notes = append(it.Notes, fmt.Sprintf("waited %s for the lease to lapse, as the refusal said", pause.Round(100*time.Millisecond)))
		}
		if !sleep(ctx, pause) {
			break
		}
		apply, err = ws.StartApply(ctx, applyLimit)
		if err != nil {
			break
		}
		it.Applies++
		err = apply.Wait()
	}
	if err != nil {
		it.Notes = append(it.Notes, fmt.Sprintf("apply %d: %s", it.Applies, firstErrorLine(apply.Output())))
		return
	}
	it.Recovered = true
	if !faultAt.IsZero() {
		it.RecoverySeconds = time.Since(faultAt).Seconds()
	}
	stopBackground() // the slow consumer, once the transfer is done
}

// sleep waits d, or less when ctx ends first; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// waitForTrigger waits until the target queue holds plan.TriggerAt messages (polled through
// management), or the apply ends first.
func (h *harness) waitForTrigger(ctx context.Context, apply *Apply, plan Plan, target *artemis.Client, queue string) (bool, int64) {
	if plan.TriggerAt == 0 {
		return true, 0
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-apply.Done():
			return false, 0
		case <-ctx.Done():
			return false, 0
		case <-tick.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		q, err := target.Queue(qctx, queue)
		cancel()
		if err == nil && q.MessageCount >= int64(plan.TriggerAt) {
			return true, q.MessageCount
		}
	}
}

// orphanNote waits, bounded, for a provider whose terraform was killed, and kills it if it
// outlives the wait: the harness never leaves a process behind.
func (h *harness) orphanNote(pid int) string {
	start := time.Now()
	for alive(pid) && time.Since(start) < 2*time.Minute {
		time.Sleep(200 * time.Millisecond)
	}
	if alive(pid) {
		_ = killPID(pid)
		return fmt.Sprintf("the provider (pid %d) outlived its killed terraform by %s and was killed by the harness", pid, time.Since(start).Round(time.Second))
	}
	return fmt.Sprintf("the provider (pid %d) exited %s after its terraform was killed", pid, time.Since(start).Round(100*time.Millisecond))
}

// firstErrorLine is terraform's first "Error:" summary and the paragraph of detail after it,
// on one line, for the notes.
func firstErrorLine(out string) string {
	var parts []string
	inError := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(strings.Trim(line, "│╷╵ "))
		if !inError {
			if rest, ok := strings.CutPrefix(line, "Error: "); ok {
				parts, inError = append(parts, rest+":"), true
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "with ") || strings.HasPrefix(line, "on ") || strings.Contains(line, "resource \"") {
			if len(parts) > 1 && line == "" {
				break
			}
			continue
		}
		parts = append(parts, line)
	}
	if len(parts) == 0 {
		return lastLines(out, 2)
	}
	s := strings.Join(parts, " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// check empties, into the tally, the target queue (on every target node), the source queue
// and every staging queue on the source, then removes what a run left on the source.
func (h *harness) check(ctx context.Context, src *artemis.Client, targets []*artemis.Client, srcQueue, tgtQueue string, tally *Tally, it *Iteration) error {
	for _, c := range targets {
		n, err := drain(ctx, c, tgtQueue, tally, placeTarget)
		if err != nil {
			return err
		}
		if c.Name() == brNode2 && n > 0 {
			it.Notes = append(it.Notes, fmt.Sprintf("node2 held %d messages of the run", n))
		}
	}
	if _, err := drain(ctx, src, srcQueue, tally, placeSource); err != nil {
		return err
	}
	left, err := src.ListQueues(ctx, transfer.StagingPrefix)
	if err != nil {
		return fmt.Errorf("listing staging queues left on the source: %w", err)
	}
	for _, q := range left {
		if strings.Contains(q.Name, ".canary-") {
			continue
		}
		it.StagingQueuesLeft++
		if !strings.HasSuffix(q.Name, ".manifest") {
			if _, err := drain(ctx, src, q.Name, tally, placeStaging); err != nil {
				return err
			}
		}
		// Removed, so that the next iteration starts clean; the result says it was there.
		if err := src.DestroyQueue(ctx, q.Name); err != nil {
			return fmt.Errorf("removing %s: %w", q.Name, err)
		}
	}
	return nil
}

// cleanUp removes the iteration's queues (the checker emptied them) and settings.
func (h *harness) cleanUp(srcQueue, tgtQueue string, targets []*artemis.Client, settings bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_ = h.admin[brSource].DestroyQueue(ctx, srcQueue)
	for _, c := range targets {
		_ = c.DestroyQueue(ctx, tgtQueue)
		if settings {
			_ = c.RemoveAddressSettings(ctx, tgtQueue)
		}
	}
}
