package bench

// A trial: one contender moving one filled queue, checked afterwards, and what it leaves
// behind removed.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

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
		b.relayInto(ctx, &run, spec, ledgerDSN, runTimeout(c), c.Size >= memoryDetailFrom)
	case ToolTerraform:
		pr, err := b.apply(ctx, spec, ct, runTimeout(c))
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

func orOK(problem string) string {
	if problem == "" {
		return "no loss or duplicate"
	}
	return problem
}

// relayInto runs our relay on spec in a child process and records in run what it measured,
// and its error; a relay that failed has its staging removed, so that the next trial starts
// from clean brokers.
func (b *bench) relayInto(ctx context.Context, run *Trial, spec transfer.Spec, ledgerDSN string, timeout time.Duration, memoryDetail bool) {
	pr, child, err := runRelay(ctx, b.srcAccess, b.tgtAccess, spec, ledgerDSN, b.cfg.RelayTuning, timeout, memoryDetail, b.cfg.Log)
	run.Process = pr
	times := child.Times
	run.Relay = &times
	run.Waits, run.Requests = child.Waits, child.Requests
	if err != nil {
		b.removeStaging(ctx, spec)
		run.Error = err.Error()
	}
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
