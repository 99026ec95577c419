package bench

import (
	"reflect"
	"strings"
	"testing"
)

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

func TestSyncedTargets_StateIssue15sGoalsFromTheCoreFilledGoalCase(t *testing.T) {
	res := syncedResults(t)
	targets := syncedTargets(res)
	for word, want := range map[string]struct{ measured, status string }{
		"terraform apply":   {"0.90x (4500 vs 5000 msg/s); the engine alone 1.00x (5000 msg/s)", statusMissed},
		"source broker CPU": {"3.00x (300 vs 100 µs/msg)", statusMissed},
		"1,000,000":         {"84% (4200 vs 5000 msg/s, 1,000,000 x 1 KiB, Core fill); artemis transfer 80% (4000 vs 5000 msg/s)", statusMet},
		"20 x 10 MiB":       {"engine highest 60.0 MiB over 1 run, provider in terraform apply highest 66.0 MiB over 1 run", statusMissed},
		"resumed":           {"terraform apply: median 1.50 s, slowest 1.80 s over 2 correct runs of 20,000 x 1 KiB; the engine alone, from the Resume call: median 0.90 s, slowest 1.00 s", statusMet},
	} {
		var tg Target
		for _, c := range targets {
			if strings.Contains(c.Goal, word) {
				tg = c
			}
		}
		if tg.Goal == "" {
			t.Errorf("no goal mentions %q among %v", word, targets)
			continue
		}
		if tg.Measured != want.measured || tg.Status != want.status {
			t.Errorf("%s: got %q, %s; want %q, %s", tg.Goal, tg.Measured, tg.Status, want.measured, want.status)
		}
	}
}

func TestSyncedTargets_NothingMeasuredSaysSo(t *testing.T) {
	for _, tg := range syncedTargets(&Results{}) {
		if tg.Status != statusNotMeasured {
			t.Errorf("%s: %s (%s), want %s", tg.Goal, tg.Status, tg.Measured, statusNotMeasured)
		}
	}
	res := syncedResults(t)
	res.Resume.Runs[1].OK = false
	for _, tg := range syncedTargets(res) {
		if strings.Contains(tg.Goal, "resumed") && tg.Status != statusMissed {
			t.Errorf("a failed resume run leaves the goal %s", tg.Status)
		}
	}
	// Without the provider, the engine's resume stands in, and the goal says so.
	res = syncedResults(t)
	res.Resume.Runs = []ResumeRun{res.Resume.Runs[0], res.Resume.Runs[2]}
	for _, tg := range syncedTargets(res) {
		if strings.Contains(tg.Goal, "resumed") && (!strings.Contains(tg.Goal, "of the Resume call (engine alone)") || tg.Status != statusMet ||
			tg.Measured != "engine: median 0.90 s, slowest 1.00 s over 2 correct runs of 20,000 x 1 KiB") {
			t.Errorf("engine only: %+v", tg)
		}
	}
}

func TestMarkdown_BreakdownAndResume(t *testing.T) {
	res := syncedResults(t)
	res.Targets = append(evaluateTargets(res.Cases), syncedTargets(res)...)
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "bench/throughput.png"})
	for _, want := range []string{
		"### Where the brokers' CPU goes (100,000 x 1 KiB, each part on its own)",
		"(source 10 ms/s, target 20 ms/s",
		"| " + partTexts[PartStage] + " | source | core | 100 | 3 of 3 |", // median of 100, 120, 80
		"| " + partTexts[PartDeliverOurs] + " | source | core | 150 | 1 of 1 |",
		"| " + partTexts[PartStoreAMQPTx] + " | target | – | – | 0 of 1 |",
		"- store-amqp-tx ( fill) failed: boom",
		"cost the source broker 300 µs/msg (median of its runs above). The staging move (100) and the delivery with its per-message acknowledgements (150) account for 250 of it; the other 50 µs/msg",
		"cost the source broker 100 µs/msg (Core delivery committing 1,000 at a time, measured alone: 60)",
		"costs the source 80 µs/msg more (150 against 70)",
		"**Converting Core messages to AMQP** for our receiver costs the source 60 µs/msg (delivery of Core-filled messages 150, of AMQP-filled ones 90)",
		"costs 180 µs/msg with the duplicate id and 140 without: the id costs 40. `artemis producer` over Core committing 1,000 at a time costs 90.",
		"the target spent 200 µs/msg on ours and 150 on `artemis transfer`'s",
		"### Resume after a kill (20,000 x 1 KiB, Core fill)",
		"- terraform apply: median first batch 1.50 s, slowest 1.80 s, 2 of 2 runs correct",
		"- engine: median first batch 0.90 s, slowest 1.00 s, 2 of 2 runs correct",
		"| 2 | terraform apply | 5,000 | 1.80 | 7.00 | ok |",
		"### CPU per message (100,000 x 1 KiB, Core fill)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// The run's management requests, at what one costs the source timed alone, are set apart from
// the rest of the source's CPU that the parts do not explain.
func TestMarkdown_BreakdownCountsTheRunsManagementRequests(t *testing.T) {
	res := syncedResults(t)
	gc := goalCaseOf(res.Cases)
	for i := range gc.Runs {
		if gc.Runs[i].Contender == ContenderOurs {
			gc.Runs[i].Requests = &ManagementRequests{Source: 200, Target: 30}
		}
	}
	// 300 requests for 1.6 s of CPU, 0.1 s of it idle: 5,000 µs each; 200 of them over
	// 100,000 messages are 10 µs/msg of the 50 the parts leave.
	res.Breakdown.ManagementRead = &BreakdownPart{ID: "management-read", Broker: "source", Messages: 300, CPUSeconds: 1.6, IdleSeconds: 0.1}
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "bench/throughput.png"})
	want := "account for 250 of it; its 200 management requests to the source (a median over 1 run; 5000 µs of the source's CPU each, 300 timed alone) 10 more; the other 40 µs/msg"
	if !strings.Contains(md, want) {
		t.Errorf("the report lacks %q", want)
	}
}

func TestParseCases_Repetitions(t *testing.T) {
	got, err := ParseCases("1000000x1024/core@1=ours+transfer-core-default,10x1024@2")
	if err != nil || !reflect.DeepEqual(got, []Case{{Count: 1_000_000, Size: kib, Producer: ProducerCore, Reps: 1, Only: []string{ContenderOurs, ContenderCoreDflt}},
		{Count: 10, Size: kib, Reps: 2}}) {
		t.Errorf("got %v, %v", got, err)
	}
	if !got[0].Runs(ContenderOurs) || got[0].Runs(ContenderApply) || !got[1].Runs(ContenderApply) {
		t.Error("Runs does not follow Only")
	}
	for _, bad := range []string{"10x1024@0", "10x1024@x", "10x1024/core@-1", "10x1024="} {
		if _, err := ParseCases(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if p := (Profile{Reps: 3}); p.RepsOf(got[0]) != 1 || p.RepsOf(Case{}) != 3 {
		t.Error("RepsOf does not prefer the case's repetitions")
	}
}

func TestWriteSamples_RatesAndPagingEveryFewSamples(t *testing.T) {
	var b strings.Builder
	run := Trial{Rep: 1, OK: true}
	for i := 1; i <= 2*maxSampleRows; i++ {
		run.Samples = append(run.Samples, Sample{At: float64(10 * i), Source: int64(1000 - 10*i), Staged: 5, Target: int64(100 * i),
			StagingPaging: i%2 == 0, TargetPaging: i == 2*maxSampleRows})
	}
	writeSamples(&b, run, "ours (relay)")
	md := b.String()
	for _, want := range []string{
		"during ours (relay), repetition 1 (every 20s;",
		"| 20 | 980 | 5 | 200 | 10 | staging |", // the first row shown: 200 on the target in 20 s
		"| 40 | 960 | 5 | 400 | 10 | staging |",
		"| 500 | 500 | 5 | 5,000 | 10 | staging, target |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the samples lack %q:\n%s", want, md)
		}
	}
	if rows := strings.Count(md, "\n| ") - 1; rows != maxSampleRows {
		t.Errorf("%d rows, want %d", rows, maxSampleRows)
	}
	b.Reset()
	writeSamples(&b, Trial{}, "none")
	if b.Len() != 0 {
		t.Error("a run without samples writes something")
	}
}

func TestMarkdown_BrokerColumnsFromAnotherRunSayWhichRun(t *testing.T) {
	res := syncedResults(t)
	res.Brokers, res.Machine.Commit, res.Machine.Date = "synced", "aaa", "2026-12-01 18:00 UTC"
	other := syncedResults(t)
	other.Brokers, other.Machine.Commit, other.Machine.Date = "fast", "bbb", "2026-11-30 02:48 UTC"
	other.Cases = other.Cases[:1]
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "c.png", Other: other, OtherPath: "bench/results-no-fsync.json"})
	for _, want := range []string{
		"Two runs on brokers created two ways on this machine: **synced**",
		"(this page's run: profile `standard`, commit `aaa`, 2026-12-01 18:00 UTC), and **fast**",
		"(profile `standard`, commit `bbb`, 2026-11-30 02:48 UTC)",
		"| 100,000 x 1 KiB, Core fill | ours (relay) | 5,000 | 5,000 | 300 | 300 |",
		"| 20 x 10 MiB, Core fill | ours (relay) | 20 | – | 50,000 | – |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestPagingSummary_SplitsTheTargetRateAtItsFirstPagingSample(t *testing.T) {
	samples := []Sample{
		{At: 0, Target: 0, Staged: 0},
		{At: 10, Target: 40_000, Staged: 10_000},
		{At: 20, Target: 80_000, Staged: 12_000, TargetPaging: true},
		{At: 30, Target: 100_000, Staged: 9_000, TargetPaging: true},
		{At: 40, Target: 120_000, Staged: 0, TargetPaging: true},
	}
	got := pagingSummary(samples)
	for _, want := range []string{"4,000 msg/s before its address began to page (20 s)", "2,000 msg/s while it paged (20 s)", "At most 12,000 messages"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	if pagingSummary(samples[:2]) != "" {
		t.Error("a run whose target never paged has no before-and-after line")
	}
}

func TestWriteDepth_SetsEachSliceWithAndWithoutTheDuplicateIDSideBySide(t *testing.T) {
	slice := func(dup bool, first int, cpu float64, paging bool) DepthSlice {
		return DepthSlice{DupID: dup, StoredFirst: first, Messages: 1000, WallSeconds: 0.5, CPUSeconds: cpu, Paging: paging}
	}
	res := &Results{Depth: &DepthStore{Count: 2000, Slice: 1000, Slices: []DepthSlice{
		slice(true, 0, 0.1, false), slice(true, 1000, 0.3, true),
		slice(false, 0, 0.08, false), slice(false, 1000, 0.06, true),
	}}}
	var b strings.Builder
	writeDepth(&b, res)
	got := b.String()
	for _, want := range []string{
		"| 0 | 100 | 2,000 | no | 80 | 2,000 | no |",
		"| 1,000 | 300 | 2,000 | yes | 60 | 2,000 | yes |",
		"with the duplicate id 100 µs before the address paged and 300 while it paged; without it 80 and 60",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the depth section lacks %q:\n%s", want, got)
		}
	}
}

func TestMarkdown_StatesTheWarmUpMoves(t *testing.T) {
	res := syncedResults(t)
	res.Profile.WarmupCount = 50_000
	res.WarmupSourceMicros = []float64{420, 240.4, 150}
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "bench/throughput.png"})
	want := "our relay moved 50,000 x 1 KiB until the source broker's CPU per message of a move came within 10% of the move before (at most 8 moves"
	if !strings.Contains(md, want) || !strings.Contains(md, "Source µs/msg of the warm-up moves: 420, 240, 150.") {
		t.Errorf("the report does not state the warm-up as run:\n%s", md[strings.Index(md, "## How it was measured"):])
	}
}
