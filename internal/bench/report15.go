package bench

import (
	"fmt"
	"strings"
	"time"
)

// partKey is a part as the breakdown table groups it: one row per part and fill.
type partKey struct {
	id   string
	fill Producer
}

// breakdownMedians are the median µs/msg of each part's correct runs, in the order the parts
// first ran, with how many ran and how many were correct.
func breakdownMedians(bd *Breakdown) (order []partKey, median map[partKey]float64, ok, runs map[partKey]int) {
	values := map[partKey][]float64{}
	ok, runs = map[partKey]int{}, map[partKey]int{}
	for _, p := range bd.Parts {
		k := partKey{p.ID, p.Fill}
		if runs[k] == 0 {
			order = append(order, k)
		}
		runs[k]++
		if p.Error == "" {
			ok[k]++
			values[k] = append(values[k], p.MicrosPerMessage())
		}
	}
	median = map[partKey]float64{}
	for k, v := range values {
		median[k] = Median(v)
	}
	return order, median, ok, runs
}

// writeBreakdown shows each part of a move's broker work measured on its own, and what the
// differences between parts say: what acknowledging each message costs against a transaction,
// what converting Core to AMQP costs, what the duplicate id costs; beside the whole move's and
// artemis transfer's cost in the goal case.
func writeBreakdown(b *strings.Builder, res *Results) {
	bd := res.Breakdown
	if bd == nil || len(bd.Parts) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	name := Case{Count: bd.Count, Size: bd.Size}.Name()
	p("### Where the brokers' CPU goes (%s, each part on its own)\n\n", name)
	p("Each part ran alone on the same brokers, on a queue of %s. Its cost is the CPU of the broker it loads during the part, less that broker's CPU at rest over the same time (source %.0f ms/s, target %.0f ms/s, read for %.0f s before the parts). A source part ran on a queue filled by `artemis producer` (Core or AMQP, not measured) and staged as the engine stages; the ways `artemis transfer` and an AMQP client with transactions do the same work are measured beside ours. Medians where a part ran more than once.\n\n",
		name, bd.IdleSourcePerSec*1000, bd.IdleTargetPerSec*1000, breakdownIdle.Seconds())
	order, median, ok, runs := breakdownMedians(bd)
	p("| part | broker | fill | µs/msg | correct runs |\n|---|---|---|---:|---:|\n")
	for _, k := range order {
		v := "–"
		if ok[k] > 0 {
			v = fmt.Sprintf("%.0f", median[k])
		}
		fill := string(k.fill)
		if fill == "" {
			fill = "–"
		}
		broker := "source"
		if strings.HasPrefix(k.id, "store") {
			broker = "target"
		}
		p("| %s | %s | %s | %s | %d of %d |\n", partTexts[k.id], broker, fill, v, ok[k], runs[k])
	}
	p("\n")
	for _, part := range bd.Parts {
		if part.Error != "" {
			p("- %s (%s fill) failed: %s\n", part.ID, part.Fill, oneLine(part.Error))
		}
	}

	get := func(id string, fill Producer) (float64, bool) {
		k := partKey{id, fill}
		return median[k], ok[k] > 0
	}
	var lines []string
	gc := goalCaseOf(res.Cases)
	ours, dflt := okSummary(gc, ContenderOurs), okSummary(gc, ContenderCoreDflt)
	stage, okStage := get(PartStage, ProducerCore)
	deliver, okDeliver := get(PartDeliverOurs, ProducerCore)
	if ours != nil && okStage && okDeliver {
		whole := ours.SourceCPU * 1e6 / float64(gc.Count)
		rest := whole - stage - deliver
		line := fmt.Sprintf("**Source, our move.** The whole move of %s cost the source broker %.0f µs/msg (median of its runs above). The staging move (%.0f) and the delivery with its per-message acknowledgements (%.0f) account for %.0f of it; ",
			gc.Name, whole, stage, deliver, stage+deliver)
		if mr := bd.ManagementRead; mr != nil && mr.Error == "" {
			if reqs, n := medianSourceRequests(gc.Runs); n > 0 {
				mgmt := reqs * mr.MicrosPerMessage() / float64(gc.Count)
				line += fmt.Sprintf("its %.0f management requests to the source (a median over %s; %.0f µs of the source's CPU each, %d timed alone) %.0f more; ",
					reqs, plural(n, "run"), mr.MicrosPerMessage(), mr.Messages, mgmt)
				rest -= mgmt
			}
		}
		if rest >= 0 {
			line += fmt.Sprintf("the other %.0f µs/msg are the run's own records (an in-flight and a counted record per batch, each a synchronous durable send), its queues and settings, and the parts running at once.", rest)
		} else {
			line += fmt.Sprintf("the parts measured alone cost %.0f µs/msg more than the whole, which is the measurements' spread.", -rest)
		}
		lines = append(lines, line)
	}
	if dflt != nil {
		line := fmt.Sprintf("**Source, `artemis transfer`.** Its move of %s cost the source broker %.0f µs/msg", gc.Name, dflt.SourceCPU*1e6/float64(gc.Count))
		if v, okv := get(PartDeliverCoreTx, ProducerCore); okv {
			line += fmt.Sprintf(" (Core delivery committing 1,000 at a time, measured alone: %.0f)", v)
		}
		lines = append(lines, line+": it does not stage, and it acknowledges 1,000 messages in one transaction.")
	}
	if tx, okTx := get(PartDeliverAMQPTx, ProducerCore); okDeliver && okTx {
		if deliver > tx {
			lines = append(lines, fmt.Sprintf("**Acknowledging each message** instead of 1,000 in one AMQP transaction costs the source %.0f µs/msg more (%.0f against %.0f): what transactions, which go-amqp does not have, would save.", deliver-tx, deliver, tx))
		} else {
			lines = append(lines, fmt.Sprintf("**Acknowledging each message** costs the source no more than 1,000 in one AMQP transaction here (%.0f against %.0f µs/msg): transactions, which go-amqp does not have, would not save source CPU.", deliver, tx))
		}
	}
	if amqpFill, okA := get(PartDeliverOurs, ProducerAMQP); okDeliver && okA {
		lines = append(lines, fmt.Sprintf("**Converting Core messages to AMQP** for our receiver costs the source %.0f µs/msg (delivery of Core-filled messages %.0f, of AMQP-filled ones %.0f).", deliver-amqpFill, deliver, amqpFill))
	}
	if okStage {
		lines = append(lines, fmt.Sprintf("**Staging** costs the source %.0f µs/msg: the price of keeping the selection on the source, where a crash cannot lose it, and of freezing it at the run's start.", stage))
	}
	dup, okDup := get(PartStoreDupID, "")
	if plain, okPlain := get(PartStorePlain, ""); okDup && okPlain {
		line := fmt.Sprintf("**Target.** Our sender's store, each message confirmed on its own, costs %.0f µs/msg with the duplicate id and %.0f without: the id costs %.0f.", dup, plain, dup-plain)
		if core, okCore := get(PartStoreCoreTx, ""); okCore {
			line += fmt.Sprintf(" `artemis producer` over Core committing 1,000 at a time costs %.0f", core)
			if amqpTx, okAT := get(PartStoreAMQPTx, ""); okAT {
				line += fmt.Sprintf(", over AMQP %.0f", amqpTx)
			}
			line += "."
		}
		if ours != nil && dflt != nil {
			line += fmt.Sprintf(" In the whole moves the target spent %.0f µs/msg on ours and %.0f on `artemis transfer`'s.", ours.TargetCPU*1e6/float64(gc.Count), dflt.TargetCPU*1e6/float64(gc.Count))
		}
		lines = append(lines, line)
	}
	dupPg, okDupPg := get(PartStoreDupIDPaging, "")
	if plainPg, okPlainPg := get(PartStorePlainPaging, ""); okDupPg && okPlainPg {
		line := fmt.Sprintf("**Target, paging.** On an address that pages, our sender's store costs %.0f µs/msg with the duplicate id and %.0f without: the id costs %.0f there.", dupPg, plainPg, dupPg-plainPg)
		if core, okCore := get(PartStoreCoreTxPaging, ""); okCore {
			line += fmt.Sprintf(" `artemis producer` over Core committing 1,000 at a time costs %.0f.", core)
		}
		line += " (The broker stores a message that carries a duplicate id outside a transaction in a transaction of its own, and a paging address records a page transaction for each transaction and keeps it until its messages are consumed: one per message for our relay, which has no AMQP transactions, one per 1,000 for a client that commits.)"
		lines = append(lines, line)
	}
	for _, l := range lines {
		p("- %s\n", l)
	}
	if len(lines) > 0 {
		p("\n")
	}
}

// writeResume shows the killed-and-resumed runs.
func writeResume(b *strings.Builder, res *Results) {
	r := res.Resume
	if r == nil || len(r.Runs) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### Resume after a kill (%s x 1 KiB, Core fill)\n\n", groupThousands(int64(r.Count)))
	p("Each run moved a fresh queue and killed the process that relayed it (SIGKILL, nothing flushed) a quarter of the way through, then resumed the run in a new process. **Engine**: a child process running `Engine.Move` killed itself once the engine reported the count relayed; a new child ran `Engine.Resume`; first batch is from the Resume call to the first batch the target confirmed. **terraform apply**: the provider was killed once the target held the count; a second `terraform apply` in the same folder resumed the run; first batch is from that apply's start to the first message that reached the target after it (the target's count, read every %s). Process is the whole second process. Each run is checked: every message on the target once, none on the source, no staging left.\n\n", resumePoll)
	for _, via := range []string{ResumeViaApply, ResumeViaEngine} {
		if median, slowest, ok, runs := r.Stats(via); runs > 0 {
			p("- %s: median first batch %.2f s, slowest %.2f s, %d of %d runs correct\n", via, median, slowest, ok, runs)
		}
	}
	p("\n| run | via | killed at | first batch s | process s | check |\n|---:|---|---:|---:|---:|---|\n")
	for _, run := range r.Runs {
		check := "ok"
		if !run.OK {
			check = "**FAILED**: " + oneLine(run.Error)
		}
		p("| %d | %s | %s | %.2f | %.2f | %s |\n", run.Rep, run.Via, groupThousands(run.KilledAt), run.FirstRelayedSeconds, run.ProcessSeconds, check)
	}
	p("\n")
}

// maxSampleRows bounds a run's table of samples; a longer run shows every few samples.
const maxSampleRows = 25

// writeSamples shows where a long run's messages were as it went, with the target's rate
// between two rows and which addresses paged.
func writeSamples(b *strings.Builder, t Trial, label string) {
	if len(t.Samples) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	step := (len(t.Samples) + maxSampleRows - 1) / maxSampleRows
	p("Where the messages were during %s, repetition %d (every %s%s; -1: not read):\n\n", label, t.Rep, sampleEvery*time.Duration(step), failedText(t.Error))
	p("| s | source | staged | target | target msg/s since the row before | paging |\n|---:|---:|---:|---:|---:|---|\n")
	prevAt, prevTarget := 0.0, int64(0)
	for i := step - 1; i < len(t.Samples); i += step {
		s := t.Samples[i]
		rate := "–"
		if s.Target >= 0 && prevTarget >= 0 && s.At > prevAt {
			rate = num(float64(s.Target-prevTarget) / (s.At - prevAt))
		}
		var paging []string
		for _, pg := range []struct {
			on   bool
			name string
		}{{s.SourcePaging, "source"}, {s.StagingPaging, "staging"}, {s.TargetPaging, "target"}} {
			if pg.on {
				paging = append(paging, pg.name)
			}
		}
		p("| %.0f | %s | %s | %s | %s | %s |\n", s.At, groupThousands(s.Source), groupThousands(s.Staged), groupThousands(s.Target), rate, strings.Join(paging, ", "))
		prevAt, prevTarget = s.At, s.Target
	}
	p("\n")
	if line := pagingSummary(t.Samples); line != "" {
		p("%s\n\n", line)
	}
}

// pagingSummary sets the target's rate before its address began to page beside its rate
// after, over whole sampling intervals, with the most messages staged at once: what paging on
// the target costs the run, and how far staging ran ahead of the relay.
func pagingSummary(samples []Sample) string {
	type span struct {
		seconds float64
		stored  int64
	}
	var before, after span
	var mostStaged int64 = -1
	for i := 1; i < len(samples); i++ {
		prev, s := samples[i-1], samples[i]
		mostStaged = max(mostStaged, s.Staged)
		if s.Target < 0 || prev.Target < 0 || s.At <= prev.At {
			continue
		}
		into := &before
		if prev.TargetPaging {
			into = &after
		}
		into.seconds += s.At - prev.At
		into.stored += s.Target - prev.Target
	}
	if before.seconds == 0 || after.seconds == 0 {
		return ""
	}
	line := fmt.Sprintf("The target stored %s msg/s before its address began to page (%.0f s) and %s msg/s while it paged (%.0f s).",
		num(float64(before.stored)/before.seconds), before.seconds, num(float64(after.stored)/after.seconds), after.seconds)
	if mostStaged >= 0 {
		line += fmt.Sprintf(" At most %s messages were staged at once.", groupThousands(mostStaged))
	}
	return line
}

// medianSourceRequests is the median count of management requests the correct runs of ours
// sent the source, and how many runs recorded it.
func medianSourceRequests(runs []Trial) (float64, int) {
	var counts []float64
	for _, r := range runs {
		if r.Contender == ContenderOurs && r.OK && r.Requests != nil {
			counts = append(counts, float64(r.Requests.Source))
		}
	}
	return Median(counts), len(counts)
}
