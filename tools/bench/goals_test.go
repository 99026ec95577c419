package bench

import (
	"strings"
	"testing"
)

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
	reportHas(t, md,
		"### Where the brokers' CPU goes (100,000 x 1 KiB, each part on its own)",
		"(source 10 ms/s, target 20 ms/s",
		"| "+partTexts[PartStage]+" | source | core | 100 | 3 of 3 |", // median of 100, 120, 80
		"| "+partTexts[PartDeliverOurs]+" | source | core | 150 | 1 of 1 |",
		"| "+partTexts[PartStoreAMQPTx]+" | target | – | – | 0 of 1 |",
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
	)
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
	reportHas(t, md, want)
}
