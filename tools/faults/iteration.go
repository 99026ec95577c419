package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// iteration runs one plan: set up, first apply with the fault, recovery, check, clean up.
func (h *runner) iteration(ctx context.Context, index, total int, plan Plan) (it Iteration) {
	start := time.Now()
	// Printed first, so that a run that hangs or crashes still says how to replay it.
	// The profile is part of the replay: it bounds the message count the seed draws from.
	h.logf("iteration %d/%d seed=%d kind=%s (replay: SEED=%d KIND=%s make faults PROFILE=%s)", index, total, plan.Seed, plan.Kind,
		plan.Seed, plan.Kind, h.cfg.Profile.Name)
	it = Iteration{Plan: plan, Index: index}
	defer func() { it.Seconds = time.Since(start).Seconds() }()
	if plan.Kind == ProducerRacingQueueDelete {
		return h.runQueueDelete(ctx, index, plan)
	}
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
	if _, err := harness.Fill(setupCtx, src, it.SourceQueue, plan.Count, MessageSize, tag); err != nil {
		return fail("%v", err)
	}
	var stagingBefore map[string][]string
	if plan.Kind.Copies() {
		var err error
		if stagingBefore, err = stagingQueues(setupCtx, []*artemis.Client{src, tgt}); err != nil {
			return fail("%v", err)
		}
	}

	ws, err := h.workspace(h.iterationDir(index, plan, ""), plan, it.SourceQueue, it.TargetQueue)
	if err != nil {
		return fail("%v", err)
	}
	tally := NewTally(tag, plan.Count)
	if plan.Kind.Copies() {
		if err := browseOrder(setupCtx, src, it.SourceQueue, plan.Count, tally); err != nil {
			return fail("%v", err)
		}
	}
	switch {
	case plan.Kind.Anytime():
		ref, err := h.reference(ctx, index, plan)
		if err != nil {
			return fail("the reference apply: %v", err)
		}
		it.ReferenceSeconds = ref.Seconds()
		h.run(ctx, ws, plan, tgt, tally, &it)
	case plan.Kind == TwoAppliesCopy:
		second, err := h.workspace(h.iterationDir(index, plan, "second"), plan, it.SourceQueue, it.TargetQueue)
		if err != nil {
			return fail("%v", err)
		}
		h.runTwo(ctx, ws, second, &it)
	case plan.Kind == ReturnDuringResume:
		h.runReturnDuringResume(ctx, ws, index, plan, tgt, &it)
	case plan.Kind == ReturnInterruptedTwice:
		h.runReturnInterruptedTwice(ctx, ws, index, plan, tgt, &it)
	case plan.Kind == SlowManifestRead:
		h.runSlowManifestRead(ctx, ws, plan, tgt, tally, &it)
	default:
		h.run(ctx, ws, plan, tgt, tally, &it)
	}

	checkCtx, cancelCheck := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelCheck()
	if plan.Kind == KillSourceCopy {
		// The source broker itself reorders a queue when it restarts after kill -9 (shown with
		// no copy at all by TestBroker_ReordersAQueueWhenRestartedAfterAKill): the copy is held
		// to the order the source has after the restart. The copy itself only browses.
		if err := browseOrder(checkCtx, src, it.SourceQueue, plan.Count, tally); err != nil {
			return fail("browsing the source again after its restart: %v", err)
		}
		it.Notes = append(it.Notes, "source order taken again after the source broker's restart")
	}
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
	problems = append(problems, moveProblems(it)...)
	problems = append(problems, lateProblems(tally.Late)...)
	it.Problem = strings.Join(problems, "; ")
	it.OK = it.Problem == ""
	return it
}

// iterationDir is the folder of one of the iteration's working directories ("" : the
// transfer's own).
func (h *runner) iterationDir(index int, plan Plan, what string) string {
	name := fmt.Sprintf("iteration-%03d-%s", index, plan.Kind)
	if what != "" {
		name += "-" + what
	}
	return filepath.Join(h.cfg.WorkDir, name)
}

// transferConfig is the iteration's terraform configuration. The relay reaches the source and
// target brokers through the harness's proxies; the failover kind names both cluster nodes.
func (h *runner) transferConfig(plan Plan, srcQueue, tgtQueue string) harness.TransferConfig {
	env := h.cfg.Env
	key := func(name string, amqpURLs ...string) harness.BrokerKey {
		return harness.BrokerKey{AMQPURLs: amqpURLs, ManagementURL: env.Brokers[name].ManagementURL,
			Username: env.TransferUser, Password: env.TransferPassword}
	}
	source := key(brSource, "amqp://"+h.proxies[brSource].Addr())
	target := key(brTarget, "amqp://"+h.proxies[brTarget].Addr())
	if plan.Kind == FailoverTarget {
		target = key(brNode1, env.Brokers[brNode1].AMQPURL, env.Brokers[brNode2].AMQPURL)
	}
	tc := harness.TransferConfig{Resource: "fault", Source: source, Target: target, SourceQueue: srcQueue, TargetQueue: tgtQueue, Create: h.cfg.ApplyTimeout}
	if plan.Kind.Copies() {
		tc.LedgerDSN = h.ledger.DSN
	}
	return tc
}

// workspace writes, in dir, a working directory of the iteration's transfer.
func (h *runner) workspace(dir string, plan Plan, srcQueue, tgtQueue string) (*harness.Workspace, error) {
	if err := harness.WriteWorkspace(dir, h.transferConfig(plan, srcQueue, tgtQueue)); err != nil {
		return nil, err
	}
	// TF_LOG as FAULTS_TF_LOG says (e.g. INFO shows the relay's progress and waits in the
	// apply logs); off by default, since a TRACE log of every apply is large.
	return &harness.Workspace{Dir: dir, CLIConfig: h.cli, Terraform: h.cfg.Terraform, Log: h.cfg.TerraformLog,
		Env: []string{"TF_LOG=" + os.Getenv("FAULTS_TF_LOG"), "TF_LOG_PROVIDER="}}, nil
}

// check empties, into the tally, the target queue (on every target node), the source queue
// and every staging queue on the source, then removes what a run left on the source.
func (h *runner) check(ctx context.Context, src *artemis.Client, targets []*artemis.Client, srcQueue, tgtQueue string, tally *Tally, it *Iteration) error {
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
func (h *runner) cleanUp(srcQueue, tgtQueue string, targets []*artemis.Client, settings bool) {
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

// moveProblems are what the checker found wrong with a move: each message on the target
// exactly once, nothing left in staging, nothing left on the source once an apply succeeded
// (but a return's, which puts messages back there).
func moveProblems(it Iteration) []string {
	var problems []string
	for _, p := range []struct {
		n    int
		what string
	}{{it.Lost, "lost"}, {it.Doubled, "doubled"}, {it.Unexpected, "unexpected"}} {
		if p.n > 0 {
			problems = append(problems, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if it.InStaging > 0 || it.StagingQueuesLeft > 0 {
		problems = append(problems, fmt.Sprintf("%d messages in %d staging queues left", it.InStaging, it.StagingQueuesLeft))
	}
	if it.Recovered && it.LeftSource > 0 && !it.Kind.Returns() {
		problems = append(problems, fmt.Sprintf("%d messages left on the source after a successful apply", it.LeftSource))
	}
	return problems
}
