package bench

import (
	"strings"
	"testing"
)

// What several of this package's tests share.

// syncedResults is a run with the goal case filled over Core and over AMQP, a million-message
// case, the large-message case, a breakdown and a resume: every figure of issue #15's goals.
func syncedResults(t *testing.T) *Results {
	t.Helper()
	contenders := append(Contenders(1000, 10_000), Contender{ID: ContenderApply, Label: "ours (terraform apply)", Tool: ToolTerraform})
	trial := func(id string, rate, srcCPU, tgtCPU float64, rssMiB int64) Trial {
		return Trial{Contender: id, OK: true, MsgsPerSec: rate, SourceCPU: srcCPU, TargetCPU: tgtCPU,
			Process: ProcessRun{WallSeconds: 10, PeakRSSKiB: rssMiB << 10}, Relay: &RelayTimes{}}
	}
	cases := []CaseResult{
		{Case: Case{Count: goalCase, Size: kib, Producer: ProducerCore}, Name: "100,000 x 1 KiB, Core fill", Runs: []Trial{
			trial(ContenderOurs, 5000, 30, 20, 30), trial(ContenderApply, 4500, 31, 20, 35), trial(ContenderCoreDflt, 5000, 10, 15, 150)}},
		// The AMQP fill comes after the Core fill and must not be taken for the goal case.
		{Case: Case{Count: goalCase, Size: kib, Producer: ProducerAMQP}, Name: "100,000 x 1 KiB, AMQP fill", Runs: []Trial{
			trial(ContenderOurs, 9000, 5, 5, 30), trial(ContenderCoreDflt, 1000, 50, 50, 150)}},
		{Case: Case{Count: 20, Size: 10 * mib, Producer: ProducerCore}, Name: "20 x 10 MiB, Core fill", Runs: []Trial{
			trial(ContenderOurs, 20, 1, 1, 60), trial(ContenderApply, 20, 1, 1, 66)}},
		{Case: Case{Count: 1_000_000, Size: kib, Producer: ProducerCore, Reps: 1}, Name: "1,000,000 x 1 KiB, Core fill", Runs: []Trial{
			trial(ContenderOurs, 4200, 300, 200, 40), trial(ContenderCoreDflt, 4000, 100, 150, 150)}},
	}
	for i := range cases {
		finishCase(&cases[i], contenders)
	}
	res := &Results{Profile: Profiles()["standard"], Complete: true, Contenders: contenders, Cases: cases, Machine: Machine{Cores: 2}, TransferDefaultCommit: 1000,
		Resume: &ResumeResult{Count: 20_000, Runs: []ResumeRun{
			{Rep: 1, Via: ResumeViaEngine, KilledAt: 5000, FirstRelayedSeconds: 1.0, ProcessSeconds: 5, OK: true},
			{Rep: 1, Via: ResumeViaApply, KilledAt: 5000, FirstRelayedSeconds: 1.2, ProcessSeconds: 6, OK: true},
			{Rep: 2, Via: ResumeViaEngine, KilledAt: 5000, FirstRelayedSeconds: 0.8, ProcessSeconds: 5, OK: true},
			{Rep: 2, Via: ResumeViaApply, KilledAt: 5000, FirstRelayedSeconds: 1.8, ProcessSeconds: 7, OK: true}}},
		Breakdown: &Breakdown{Count: goalCase, Size: kib, IdleSourcePerSec: 0.01, IdleTargetPerSec: 0.02, Parts: []BreakdownPart{
			// 100,000 messages: µs/msg = (cpu - idle) * 10.
			{ID: PartStage, Broker: "source", Fill: ProducerCore, Messages: goalCase, WallSeconds: 10, CPUSeconds: 10.1, IdleSeconds: 0.1},
			{ID: PartDeliverOurs, Broker: "source", Fill: ProducerCore, Messages: goalCase, WallSeconds: 10, CPUSeconds: 15.1, IdleSeconds: 0.1},
			{ID: PartStage, Broker: "source", Fill: ProducerAMQP, Messages: goalCase, CPUSeconds: 12},
			{ID: PartDeliverOurs, Broker: "source", Fill: ProducerAMQP, Messages: goalCase, CPUSeconds: 9},
			{ID: PartStage, Broker: "source", Fill: ProducerCore, Messages: goalCase, CPUSeconds: 12},
			{ID: PartDeliverAMQPTx, Broker: "source", Fill: ProducerCore, Messages: goalCase, CPUSeconds: 7},
			{ID: PartStage, Broker: "source", Fill: ProducerCore, Messages: goalCase, CPUSeconds: 8},
			{ID: PartDeliverCoreTx, Broker: "source", Fill: ProducerCore, Messages: goalCase, CPUSeconds: 6},
			{ID: PartStoreDupID, Broker: "target", Messages: goalCase, CPUSeconds: 18},
			{ID: PartStorePlain, Broker: "target", Messages: goalCase, CPUSeconds: 14},
			{ID: PartStoreCoreTx, Broker: "target", Messages: goalCase, CPUSeconds: 9},
			{ID: PartStoreAMQPTx, Broker: "target", Error: "boom"},
		}},
	}
	return res
}

// reportHas fails t for each of wants the report md lacks, and then shows the report.
func reportHas(t *testing.T, md string, wants ...string) {
	t.Helper()
	lacks := false
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
			lacks = true
		}
	}
	if lacks {
		t.Logf("the report:\n%s", md)
	}
}

// section is what write writes of res, one section of the report.
func section(write func(*strings.Builder, *Results), res *Results) string {
	var b strings.Builder
	write(&b, res)
	return b.String()
}
