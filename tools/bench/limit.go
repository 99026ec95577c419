package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

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
