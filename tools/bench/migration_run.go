package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// migrationFillers is how many source queues are filled at once: enough for a broker that
// syncs its journal to group the fills' writes, few enough for two cores.
const migrationFillers = 4

// migrationTimeout bounds one contender's migration: generous (the slowest, one artemis JVM
// after another, was expected at several minutes), so that only a hang reaches it.
func migrationTimeout(t MigrationTotals, queues int) time.Duration {
	return 10*time.Minute + time.Duration(t.Messages/200)*time.Second + time.Duration(t.Bytes/(1<<20))*time.Second +
		time.Duration(queues)*5*time.Second
}

// queueName is the name of a layout's queue in one run, on both brokers: the target queue is
// named as its source, as examples/migrate-broker declares it.
func queueName(prefix string, q MigrationQueue) string { return fmt.Sprintf("%s%03d", prefix, q.Index) }

// runContender fills the source, lets one contender migrate it, checks both brokers and removes
// the run's queues.
func (m *migration) runContender(ctx context.Context, c migrationContender) MigrationRun {
	run := MigrationRun{Contender: c.id, Label: c.label, Parallel: c.parallel}
	short := map[string]string{MigrationApply: "apply", MigrationLoop: "loop1", MigrationParallel: "loopn"}[c.id]
	prefix := m.uniqueTag("mig."+short+".") + "."
	fail := func(err error) MigrationRun {
		run.OK, run.Error = false, err.Error()
		m.logf("migration %s: FAILED: %v", c.id, err)
		return run
	}
	defer m.removeRun(ctx, prefix, c.id == MigrationApply)

	m.logf("migration %s: filling %d source queues (%s)", c.id, len(m.queues), prefix+"*")
	fill, err := m.fillSource(ctx, prefix)
	if err != nil {
		return fail(err)
	}
	run.Fill = fill
	m.logf("migration %s: filled in %.0f s (%.0f msg/s)", c.id, fill.Seconds, fill.MsgsPerSec)
	if err := m.checkFilled(ctx, prefix); err != nil {
		return fail(err)
	}
	if c.id != MigrationApply {
		started := time.Now()
		if err := m.createTargets(ctx, prefix); err != nil {
			return fail(err)
		}
		run.TargetsSeconds = time.Since(started).Seconds()
		m.logf("migration %s: %d target queues created in %.1f s", c.id, len(m.queues), run.TargetsSeconds)
	}

	timeout := migrationTimeout(m.mres.Totals, len(m.queues))
	// Our recipe's step one and the standalone plan run before the brokers' CPU and the load
	// are read, so that the figures of the apply are the apply's alone, as the loop's are its own.
	var ws *harness.Workspace
	if c.id == MigrationApply {
		var inventory time.Duration
		ws, inventory, err = m.migrationWorkspace(ctx, prefix, c.parallel, timeout)
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(ws.Dir)
		run.InventorySeconds = inventory.Seconds()
		run.PlanQueues = len(m.queues)
		plan, err := ws.Plan(ctx, timeout, fmt.Sprintf("-parallelism=%d", c.parallel))
		if err != nil {
			run.PlanError = err.Error()
			m.logf("migration %s: the plan alone failed (the apply runs regardless): %v", c.id, err)
		} else {
			run.PlanSeconds = plan.Seconds()
			m.logf("migration %s: terraform plan of %d queues alone: %.1f s", c.id, run.PlanQueues, run.PlanSeconds)
		}
	}
	run.LoadAtStart = LoadAverage()
	src0, tgt0 := m.brokerCPU()
	var runErr error
	switch c.id {
	case MigrationApply:
		run.Process, run.CommandLine, run.Phases, runErr = m.applyMigration(ctx, ws, prefix, c.parallel, timeout)
	default:
		run.Process, run.CommandLine, run.Invocations, runErr = m.transferLoop(ctx, prefix, c.parallel, timeout)
	}
	src1, tgt1 := m.brokerCPU()
	run.LoadAtEnd = LoadAverage()
	run.SourceCPU, run.TargetCPU = (src1 - src0).Seconds(), (tgt1 - tgt0).Seconds()
	t := m.mres.Totals
	run.Messages, run.Bytes = t.Messages, t.Bytes
	if w := run.Process.WallSeconds; w > 0 {
		run.MsgsPerSec, run.MiBPerSec = float64(t.Messages)/w, float64(t.Bytes)/mib/w
	}
	if runErr != nil {
		run.Error = runErr.Error()
	}
	m.logf("migration %s: %.1f s, %.0f msg/s, broker CPU %.1f s + %.1f s, client CPU %.1f s; checking",
		c.id, run.Process.WallSeconds, run.MsgsPerSec, run.SourceCPU, run.TargetCPU, run.Process.CPUSeconds)

	check, err := m.checkMigration(ctx, prefix, c.id == MigrationApply)
	run.Check = check
	switch {
	case err != nil:
		return fail(fmt.Errorf("checking the migration: %w (run error: %s)", err, orOK(run.Error)))
	case run.Error != "":
		return fail(fmt.Errorf("%s (check: %s)", run.Error, orOK(check.Problem())))
	case !check.OK():
		return fail(errors.New("lost or doubled messages: " + check.Problem()))
	}
	run.OK = true
	m.logf("migration %s: correct: %d queues, %s messages, each once on the target (check %.0f s)",
		c.id, check.Queues, groupThousands(check.Distinct), check.Seconds)
	return run
}

// eachQueue runs do for every queue of the layout, workers at a time, and joins their errors.
func (m *migration) eachQueue(ctx context.Context, workers int, do func(ctx context.Context, q MigrationQueue) error) error {
	next := make(chan MigrationQueue)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range next {
				if err := do(ctx, q); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, q := range m.queues {
		select {
		case next <- q:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return errors.Join(errs...)
}

// fillSource creates every queue of the layout on the source and fills it with our pipelined
// sender (harness.Fill), each message numbered and tagged with its queue's name.
func (m *migration) fillSource(ctx context.Context, prefix string) (harness.FillResult, error) {
	start := time.Now()
	err := m.eachQueue(ctx, migrationFillers, func(ctx context.Context, q MigrationQueue) error {
		name := queueName(prefix, q)
		if err := m.srcAdmin.CreateQueue(ctx, runQueue(name), false); err != nil {
			return err
		}
		if q.Count == 0 {
			return nil
		}
		_, err := harness.Fill(ctx, m.srcAdmin, name, q.Count, q.Size, name)
		return err
	})
	if err != nil {
		return harness.FillResult{}, fmt.Errorf("filling the source broker: %w", err)
	}
	secs := time.Since(start).Seconds()
	return harness.FillResult{Seconds: secs, MsgsPerSec: float64(m.mres.Totals.Messages) / secs}, nil
}

// checkFilled reads every source queue's count back: each contender starts from the same broker.
// A queue counts a confirmed message a moment after the broker confirms it, so the counts are
// read again, for up to fillSettle, until they match.
func (m *migration) checkFilled(ctx context.Context, prefix string) error {
	deadline := time.Now().Add(fillSettle)
	for {
		err := m.checkFilledOnce(ctx, prefix)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// fillSettle bounds how long checkFilled waits for the counts of a fill to settle.
const fillSettle = 5 * time.Second

func (m *migration) checkFilledOnce(ctx context.Context, prefix string) error {
	listed, err := m.srcAdmin.ListQueues(ctx, prefix)
	if err != nil {
		return fmt.Errorf("listing the filled source queues: %w", err)
	}
	counts := map[string]int64{}
	for _, q := range listed {
		counts[q.Name] = q.MessageCount
	}
	if len(counts) != len(m.queues) {
		return fmt.Errorf("the source holds %d queues named %s*, want %d", len(counts), prefix, len(m.queues))
	}
	for _, q := range m.queues {
		if got := counts[queueName(prefix, q)]; got != int64(q.Count) {
			return fmt.Errorf("filled source queue %s holds %d messages, want %d", queueName(prefix, q), got, q.Count)
		}
	}
	return nil
}

// createTargets creates every target queue as its source was created, before a loop of
// artemis transfer (which needs them to exist).
func (m *migration) createTargets(ctx context.Context, prefix string) error {
	err := m.eachQueue(ctx, 1, func(ctx context.Context, q MigrationQueue) error {
		return m.tgtAdmin.CreateQueue(ctx, runQueue(queueName(prefix, q)), false)
	})
	if err != nil {
		return fmt.Errorf("creating the target queues: %w", err)
	}
	return nil
}

// removeRun deletes the run's queues from both brokers, and the address settings our apply
// declared on the target, so that the next contender starts from an empty target.
func (m *migration) removeRun(ctx context.Context, prefix string, settings bool) {
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	for _, c := range []*artemis.Client{m.srcAdmin, m.tgtAdmin} {
		listed, err := c.ListQueues(rmCtx, prefix)
		if err != nil {
			m.logf("listing the run's queues on %s: %v", c.Name(), err)
			continue
		}
		for _, q := range listed {
			if err := c.DestroyQueue(rmCtx, q.Name); err != nil && !errors.Is(err, artemis.ErrNotFound) {
				m.logf("removing %s on %s: %v", q.Name, c.Name(), err)
			}
		}
	}
	if settings {
		m.removeStaging(rmCtx, prefix)
		for _, q := range m.queues {
			if err := m.tgtAdmin.RemoveAddressSettings(rmCtx, queueName(prefix, q)); err != nil && !errors.Is(err, artemis.ErrNotFound) {
				m.logf("removing the address settings of %s on the target: %v", queueName(prefix, q), err)
				break
			}
		}
	}
}

// removeStaging deletes the staging queues a failed apply left on the source for the run's
// queues (a correct apply leaves none).
func (m *migration) removeStaging(ctx context.Context, prefix string) {
	listed, err := m.srcAdmin.ListQueues(ctx, transfer.StagingPrefix)
	if err != nil {
		m.logf("looking for staging left on the source: %v", err)
		return
	}
	ours := map[string]bool{}
	for _, q := range m.queues {
		ours[stagingPrefixOf(migrationSpec(prefix, q))] = true
	}
	for _, q := range listed {
		for p := range ours {
			if strings.HasPrefix(q.Name, p) {
				if err := m.srcAdmin.DestroyQueue(ctx, q.Name); err != nil && !errors.Is(err, artemis.ErrNotFound) {
					m.logf("removing staging queue %s: %v", q.Name, err)
				}
				break
			}
		}
	}
}

// migrationSpec is the move our apply makes of one queue: the provider's broker keys are
// "source" and "target", as the workspace names them, so its staging is named as this spec's.
func migrationSpec(prefix string, q MigrationQueue) transfer.Spec {
	name := queueName(prefix, q)
	return transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "source", Queue: name},
		Target: transfer.Endpoint{Broker: "target", Queue: name}}
}
