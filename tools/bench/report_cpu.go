package bench

import (
	"fmt"
	"strings"
)

// writeCPUBudget says, for the goal case, what each contender cost in CPU per message and what
// that means on this machine's cores: when every process shares the same few cores, a rate is
// bounded by the CPU all of them spend per message, whatever the relay does.
func writeCPUBudget(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	cr := goalCaseOf(res.Cases)
	ours, dflt := (*ContenderSummary)(nil), (*ContenderSummary)(nil)
	if cr != nil {
		ours, dflt = cr.summary(ContenderOurs), cr.summary(ContenderCoreDflt)
	}
	if ours == nil || dflt == nil || ours.OKRuns == 0 || dflt.OKRuns == 0 || res.Machine.Cores <= 0 {
		return
	}
	labels := map[string]string{}
	for _, c := range res.Contenders {
		labels[c.ID] = c.Label
	}
	cores := float64(res.Machine.Cores)
	perMsg := func(sec float64) float64 { return sec * 1e6 / float64(cr.Count) }
	p("### CPU per message (%s)\n\n", cr.Name)
	p("Every process runs on the same %d cores, so a rate cannot exceed cores / (CPU per message, all processes together). Medians of the correct runs; the client is our relay process or the `artemis transfer` JVM.\n\n", res.Machine.Cores)
	p("| contender | client µs/msg | source broker µs/msg | target broker µs/msg | total µs/msg | ceiling on %d cores, msg/s | measured msg/s |\n|---|---:|---:|---:|---:|---:|---:|\n", res.Machine.Cores)
	for _, s := range cr.Summary {
		if s.OKRuns == 0 {
			continue
		}
		total := perMsg(s.ClientCPU + s.SourceCPU + s.TargetCPU)
		p("| %s | %.0f | %.0f | %.0f | %.0f | %s | %s |\n", labels[s.Contender], perMsg(s.ClientCPU), perMsg(s.SourceCPU), perMsg(s.TargetCPU),
			total, num(cores*1e6/total), num(s.MsgsPerSec))
	}
	goalRate := goalVsDefault * dflt.MsgsPerSec
	brokers := perMsg(ours.SourceCPU + ours.TargetCPU)
	p("\n%.0fx artemis transfer is %s msg/s: on %d cores that leaves %.0f µs of CPU per message for both brokers and the relay together. ",
		goalVsDefault, num(goalRate), res.Machine.Cores, cores*1e6/goalRate)
	p("Our run cost the two brokers %.0f µs per message alone (artemis transfer's run cost them %.0f), so even a relay that used no CPU would top out at %s msg/s here (%.2fx artemis transfer",
		brokers, perMsg(dflt.SourceCPU+dflt.TargetCPU), num(cores*1e6/brokers), cores*1e6/brokers/dflt.MsgsPerSec)
	if cr.Limit > 0 {
		p(", %.0f%% of the raw limit", 100*cores*1e6/brokers/cr.Limit)
	}
	if res.Breakdown != nil && len(res.Breakdown.Parts) > 0 {
		p("). Where the brokers' share goes, part by part, is measured in the next section.\n\n")
		return
	}
	p("). Where the brokers' share goes is measured part by part when the profile measures the breakdown (BreakdownCount); this run did not.\n\n")
}

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
