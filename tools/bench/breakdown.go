package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// The parts of a move whose broker CPU the breakdown measures, each on its own, and the ways
// `artemis transfer` (or an AMQP client with transactions) does the same work, for comparison.
const (
	PartStage         = "stage"           // source: moveMessages into a staging queue, the engine's chunk a call
	PartDeliverOurs   = "deliver-ours"    // source: delivery to our receiver, each message accepted on its own
	PartDeliverAMQPTx = "deliver-amqp-tx" // source: artemis consumer over AMQP, committing 1,000 at a time
	PartDeliverCoreTx = "deliver-core-tx" // source: artemis consumer over Core, committing 1,000 at a time
	PartStoreDupID    = "store-dupid"     // target: our sender with a duplicate id, each message confirmed on its own
	PartStorePlain    = "store-plain"     // target: the same without a duplicate id
	PartStoreCoreTx   = "store-core-tx"   // target: artemis producer over Core, committing 1,000 at a time
	PartStoreAMQPTx   = "store-amqp-tx"   // target: artemis producer over AMQP, committing 1,000 at a time
	// The same stores on a target address that pages from its first message, as a target
	// filled with a million messages does (its address outgrows the broker's memory).
	PartStoreDupIDPaging  = "store-dupid-paging"
	PartStorePlainPaging  = "store-plain-paging"
	PartStoreCoreTxPaging = "store-core-tx-paging"
)

// pagingParts are the store parts on a paging target; each is its non-paging part's twin.
var pagingParts = map[string]string{PartStoreDupIDPaging: PartStoreDupID, PartStorePlainPaging: PartStorePlain, PartStoreCoreTxPaging: PartStoreCoreTx}

// pagingMaxSize is the target address's max-size-bytes in the paging parts: one default page
// file (10 MiB) and 1 MiB more, the least the broker accepts with the default page size, so
// that all but the first 9,000 or so of the part's 1 KiB messages are paged.
const pagingMaxSize = 11 << 20

// partTexts say what each part is, for the report.
var partTexts = map[string]string{
	PartStage:             "staging move: `moveMessages` into a staging queue, 2,000 a call (the engine's default chunk)",
	PartDeliverOurs:       "delivery to our relay's receiver (go-amqp), each message accepted on its own, as the relay does",
	PartDeliverAMQPTx:     "delivery to `artemis consumer` over AMQP committing 1,000 at a time (AMQP transactions, which go-amqp lacks)",
	PartDeliverCoreTx:     "delivery to `artemis consumer` over Core committing 1,000 at a time (what `artemis transfer` asks of the source)",
	PartStoreDupID:        "store by our relay's sender (go-amqp, 1,000 in flight), each message with `_AMQ_DUPL_ID`, each confirmed on its own, as the relay does",
	PartStorePlain:        "the same store without a duplicate id",
	PartStoreCoreTx:       "store from `artemis producer` over Core committing 1,000 at a time, no duplicate id (what `artemis transfer` asks of the target)",
	PartStoreAMQPTx:       "store from `artemis producer` over AMQP committing 1,000 at a time, no duplicate id",
	PartStoreDupIDPaging:  "store by our relay's sender with `_AMQ_DUPL_ID`, as above, on a target address that pages (max-size-bytes 11 MiB)",
	PartStorePlainPaging:  "the same paging store without a duplicate id",
	PartStoreCoreTxPaging: "store from `artemis producer` over Core committing 1,000 at a time on a target address that pages",
}

// breakdownCommit is the commit interval of the CLI parts: `artemis transfer`'s default.
const breakdownCommit = 1000

// Breakdown is where the brokers' CPU goes in a move: each part measured on its own on the
// same brokers, as the CPU the broker it loads spent during it, less that broker's idle CPU over
// the same time.
type Breakdown struct {
	Count int `json:"count"`
	Size  int `json:"size"`
	// IdleSourcePerSec and IdleTargetPerSec are each broker's CPU seconds per second at rest,
	// measured before the parts.
	IdleSourcePerSec float64         `json:"idle_source_cpu_per_s"`
	IdleTargetPerSec float64         `json:"idle_target_cpu_per_s"`
	Parts            []BreakdownPart `json:"parts"`
	// ManagementRead is managementReads reads of a queue's depth, each one management request
	// to the source as the relay's user: its Messages are requests, so MicrosPerMessage is the
	// source's CPU per request.
	ManagementRead *BreakdownPart `json:"management_read,omitempty"`
}

// managementReads is how many management requests the breakdown times.
const managementReads = 300

// BreakdownPart is one measurement of one part.
type BreakdownPart struct {
	ID     string   `json:"id"`
	Broker string   `json:"broker"` // source or target: the broker whose CPU is counted
	Fill   Producer `json:"fill,omitempty"`
	// Messages is how many messages the part handled.
	Messages    int     `json:"messages"`
	WallSeconds float64 `json:"wall_s"`
	CPUSeconds  float64 `json:"cpu_s"`  // the broker's CPU during the part
	IdleSeconds float64 `json:"idle_s"` // its idle rate times the part's wall time
	Error       string  `json:"error,omitempty"`
}

// MicrosPerMessage is the part's broker CPU per message, idle left out.
func (p BreakdownPart) MicrosPerMessage() float64 {
	if p.Messages <= 0 {
		return 0
	}
	return max(0, p.CPUSeconds-p.IdleSeconds) * 1e6 / float64(p.Messages)
}

// breakdownIdle is how long the brokers' idle CPU is read before the parts.
const breakdownIdle = 10 * time.Second

// measureBreakdown measures every part on queues of n x 1 KiB: the source's parts on freshly
// filled and staged queues, the target's on empty ones. A part that fails is kept with its error;
// the rest still run.
func (b *bench) measureBreakdown(ctx context.Context, n int) *Breakdown {
	bd := &Breakdown{Count: n, Size: kib}
	src0, tgt0 := b.brokerCPU()
	select {
	case <-ctx.Done():
		return bd
	case <-time.After(breakdownIdle):
	}
	src1, tgt1 := b.brokerCPU()
	bd.IdleSourcePerSec = (src1 - src0).Seconds() / breakdownIdle.Seconds()
	bd.IdleTargetPerSec = (tgt1 - tgt0).Seconds() / breakdownIdle.Seconds()

	mr := b.managementRead(ctx, bd)
	bd.ManagementRead = &mr
	b.logf("breakdown management read: %.0f µs of source broker CPU per request (%d requests, %.1f s)%s", mr.MicrosPerMessage(), mr.Messages, mr.WallSeconds, failedText(mr.Error))

	// Source: fill (not measured), stage (measured), deliver (measured) one way. The Core fill
	// runs once per way of delivering; the AMQP fill shows what converting Core to AMQP costs.
	for _, way := range []struct {
		fill    Producer
		deliver string
	}{{ProducerCore, PartDeliverOurs}, {ProducerAMQP, PartDeliverOurs}, {ProducerCore, PartDeliverAMQPTx}, {ProducerCore, PartDeliverCoreTx}} {
		parts := b.sourceParts(ctx, bd, n, way.fill, way.deliver)
		bd.Parts = append(bd.Parts, parts...)
		for _, p := range parts {
			b.logf("breakdown %-16s %-4s fill: %.0f µs/msg of source broker CPU (%.1f s)%s", p.ID, p.Fill, p.MicrosPerMessage(), p.WallSeconds, failedText(p.Error))
		}
		if ctx.Err() != nil {
			return bd
		}
	}
	ids := []string{PartStoreDupID, PartStorePlain, PartStoreCoreTx, PartStoreAMQPTx}
	// The paging parts need most of their messages paged: a queue that fits under the limit
	// twice over would measure a store that barely pages (the quick profile's 2,000).
	if int64(n)*kib > 2*pagingMaxSize {
		ids = append(ids, PartStoreDupIDPaging, PartStorePlainPaging, PartStoreCoreTxPaging)
	} else {
		b.logf("breakdown: the paging stores are left out: %d x 1 KiB would barely page past max-size-bytes %d", n, pagingMaxSize)
	}
	for _, id := range ids {
		p := b.targetPart(ctx, bd, n, id)
		bd.Parts = append(bd.Parts, p)
		b.logf("breakdown %-16s: %.0f µs/msg of target broker CPU (%.1f s)%s", p.ID, p.MicrosPerMessage(), p.WallSeconds, failedText(p.Error))
		if ctx.Err() != nil {
			return bd
		}
	}
	return bd
}

// managementRead times managementReads reads of a queue's depth on the source, one request
// each, by a client of the relay's user: what each of a run's management requests costs the
// source broker (each is authenticated and answered by the broker's web console).
func (b *bench) managementRead(ctx context.Context, bd *Breakdown) BreakdownPart {
	failed := func(err error) BreakdownPart {
		return BreakdownPart{ID: "management-read", Broker: "source", Error: err.Error()}
	}
	c, err := b.srcAccess.client()
	if err != nil {
		return failed(err)
	}
	q := "bench." + b.uniqueTag("breakdown-mgmt-") + ".q"
	if err := b.srcAdmin.CreateQueue(ctx, runQueue(q), false); err != nil {
		return failed(err)
	}
	defer b.dropQueues(ctx, q, "")
	return b.measurePart(bd, "management-read", "source", "", managementReads, func() error {
		for range managementReads {
			if _, err := c.QueueDepth(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

func failedText(err string) string {
	if err == "" {
		return ""
	}
	return ", FAILED: " + err
}

// measurePart runs do and reads the broker's CPU around it.
func (b *bench) measurePart(bd *Breakdown, id, broker string, fill Producer, n int, do func() error) BreakdownPart {
	pid, idle := b.sourcePID, bd.IdleSourcePerSec
	if broker == "target" {
		pid, idle = b.targetPID, bd.IdleTargetPerSec
	}
	p := BreakdownPart{ID: id, Broker: broker, Fill: fill, Messages: n}
	cpu0, _ := ProcessCPU(pid)
	start := time.Now()
	err := do()
	p.WallSeconds = time.Since(start).Seconds()
	cpu1, _ := ProcessCPU(pid)
	p.CPUSeconds, p.IdleSeconds = (cpu1 - cpu0).Seconds(), idle*p.WallSeconds
	if err != nil {
		p.Error = err.Error()
	}
	return p
}

// sourceParts fills a queue of n (fill), stages it as the engine does, and delivers the staged
// messages one way, measuring the staging and the delivery.
func (b *bench) sourceParts(ctx context.Context, bd *Breakdown, n int, fill Producer, deliver string) []BreakdownPart {
	tag := b.uniqueTag(fmt.Sprintf("breakdown-%s-%s-", deliver, fill))
	srcQ, stageQ := "bench."+tag+".src", "bench."+tag+".stage"
	failed := func(id string, err error) []BreakdownPart {
		return []BreakdownPart{{ID: id, Broker: "source", Fill: fill, Error: err.Error()}}
	}
	for _, q := range []string{srcQ, stageQ} {
		if err := b.srcAdmin.CreateQueue(ctx, runQueue(q), false); err != nil {
			return failed(PartStage, err)
		}
	}
	defer b.dropQueues(ctx, srcQ, "")
	defer b.dropQueues(ctx, stageQ, "")
	if _, err := b.fill(ctx, Case{Count: n, Size: kib, Producer: fill}, srcQ, tag); err != nil {
		return failed(PartStage, err)
	}
	// The selection a whole-queue move freezes at its start.
	filter := fmt.Sprintf("AMQTimestamp <= %d", time.Now().UnixMilli())
	stage := b.measurePart(bd, PartStage, "source", fill, n, func() error {
		moved := 0
		for moved < n {
			m, err := b.srcAdmin.MoveMessages(ctx, artemis.MoveRequest{Queue: srcQ, Filter: filter, TargetQueue: stageQ, Count: transfer.DefaultChunkSize})
			if err != nil {
				return err
			}
			if m == 0 {
				return fmt.Errorf("staging stopped at %d of %d messages", moved, n)
			}
			moved += m
		}
		return nil
	})
	if stage.Error != "" {
		return []BreakdownPart{stage}
	}
	del := b.measurePart(bd, deliver, "source", fill, n, func() error {
		switch deliver {
		case PartDeliverOurs:
			return deliverEach(ctx, b.srcAdmin, stageQ, n)
		case PartDeliverAMQPTx:
			return b.cliConsume(ctx, b.srcURLs.AMQP, "amqp", stageQ, n)
		default:
			return b.cliConsume(ctx, b.srcURLs.Core, "core", stageQ, n)
		}
	})
	if del.Error == "" {
		if q, err := b.srcAdmin.Queue(ctx, stageQ); err != nil {
			del.Error = fmt.Sprintf("counting the staging queue after delivery: %v", err)
		} else if q.MessageCount != 0 {
			del.Error = fmt.Sprintf("the staging queue still holds %d of %d messages after delivery", q.MessageCount, n)
		}
	}
	return []BreakdownPart{stage, del}
}

// deliverEach receives n messages from queue as the relay's receiver does (its credit and byte
// bound) and accepts each on its own.
func deliverEach(ctx context.Context, c *artemis.Client, queue string, n int) error {
	conn, err := c.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The relay's receiver: three batches of credit, a quarter of the in-flight bytes (it
	// reckons four copies of a held message).
	r, err := conn.NewReceiver(ctx, queue+"::"+queue, artemis.ReceiverOptions{
		Credit: min(3*transfer.DefaultBatchSize, artemis.MaxCredit), MaxBytes: transfer.DefaultMaxInFlightBytes / 4})
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		msg, err := r.Receive(rctx)
		cancel()
		if err != nil {
			return fmt.Errorf("receiving message %d of %d: %w", i+1, n, err)
		}
		if err := r.Accept(ctx, msg); err != nil {
			return fmt.Errorf("accepting message %d of %d: %w", i+1, n, err)
		}
	}
	return r.Close(ctx)
}

// cliConsume empties n messages from queue with `artemis consumer`, committing 1,000 at a time.
func (b *bench) cliConsume(ctx context.Context, url, protocol, queue string, n int) error {
	args := []string{"consumer", "--silent", "--url", url, "--user", b.cli.User, "--password", b.cli.Password,
		"--protocol", protocol, "--destination", "queue://" + queue, "--message-count", strconv.Itoa(n),
		"--commit-interval", strconv.Itoa(breakdownCommit), "--receive-timeout", "30000", "--threads", "1"}
	b.res.CommandLines["breakdown-consume-"+protocol] = b.cli.CommandLine(placeholders(args, map[string]string{"--message-count": "<count>"}))
	_, err := b.cli.run(ctx, args)
	return err
}

// targetPart stores n x 1 KiB on a fresh target queue one way and checks that all arrived.
func (b *bench) targetPart(ctx context.Context, bd *Breakdown, n int, id string) BreakdownPart {
	tag := b.uniqueTag("breakdown-" + id + "-")
	tgtQ := "bench." + tag + ".tgt"
	if err := b.tgtAdmin.CreateQueue(ctx, runQueue(tgtQ), false); err != nil {
		return BreakdownPart{ID: id, Broker: "target", Error: err.Error()}
	}
	defer b.dropQueues(ctx, "", tgtQ)
	way := id // how the messages are stored
	if twin, paging := pagingParts[id]; paging {
		settings := map[string]any{"maxSizeBytes": int64(pagingMaxSize), "addressFullMessagePolicy": "PAGE"}
		if err := b.tgtAdmin.AddAddressSettings(ctx, tgtQ, settings); err != nil {
			return BreakdownPart{ID: id, Broker: "target", Error: err.Error()}
		}
		defer func() { _ = b.tgtAdmin.RemoveAddressSettings(context.WithoutCancel(ctx), tgtQ) }()
		way = twin
	}
	p := b.measurePart(bd, id, "target", "", n, func() error {
		switch way {
		case PartStoreDupID, PartStorePlain:
			// The relay's sender: two batches in flight.
			inFlight := min(2*transfer.DefaultBatchSize, artemis.MaxCredit)
			dup := ""
			if way == PartStoreDupID {
				dup = "studio:bench-" + tag + ":"
			}
			return harness.SendNumbered(ctx, b.tgtAdmin, tgtQ, n, kib, inFlight, tag, dup)
		case PartStoreCoreTx:
			_, err := b.cli.Produce(ctx, b.cli.ProducerArgs(b.tgtURLs.Core, "core", tgtQ, n, kib, tag), n)
			return err
		default:
			_, err := b.cli.Produce(ctx, b.cli.ProducerArgs(b.tgtURLs.AMQP, "amqp", tgtQ, n, kib, tag), n)
			return err
		}
	})
	if p.Error == "" {
		if q, err := b.tgtAdmin.Queue(ctx, tgtQ); err != nil {
			p.Error = fmt.Sprintf("counting the target queue: %v", err)
		} else if q.MessageCount != int64(n) {
			p.Error = fmt.Sprintf("the target queue holds %d messages, want %d", q.MessageCount, n)
		} else if way != id {
			// A paging part counts only if the address did page.
			if u, err := b.tgtAdmin.AddressUsage(ctx, q.Address); err != nil {
				p.Error = fmt.Sprintf("reading the target address's paging: %v", err)
			} else if !u.Paging {
				p.Error = "the target address did not page"
			}
		}
	}
	return p
}
