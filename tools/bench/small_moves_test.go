package bench

import (
	"strings"
	"testing"
)

func TestMoveSpans_FromCreatingToCreationCompleteOfEachMove(t *testing.T) {
	lines := []timedLine{
		{1.0, `artemis_queue_transfer.move["a"]: Creating...`},
		{1.1, `artemis_queue_transfer.move["b"]: Creating...`},
		{1.5, `artemis_queue.x: Creating...`},
		{2.0, `artemis_queue.x: Creation complete after 0s [id=x]`},
		{2.4, `artemis_queue_transfer.move["b"]: Creation complete after 1s [id=r2]`},
		{3.5, `artemis_queue_transfer.move["a"]: Creation complete after 2s [id=r1]`},
		{4.0, `artemis_queue_transfer.move["c"]: Creation complete after 1s [id=r3]`},
	}
	got := moveSpans(lines)
	if len(got) != 2 || !near(got[`artemis_queue_transfer.move["a"]`], 2.5) || !near(got[`artemis_queue_transfer.move["b"]`], 1.3) {
		t.Errorf("spans %v, want a 2.5 s and b 1.3 s (c never started, the queue is not a move)", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestSmallMovesConfig_OneTransferPerQueueAndTheirDurations(t *testing.T) {
	src := BrokerAccess{AMQPURL: "amqp://s:5672", ManagementURL: "http://s:8161/console/jolokia", Username: "admin", Password: "p"}
	tgt := BrokerAccess{AMQPURL: "amqp://t:5672", ManagementURL: "http://t:8161/console/jolokia", Username: "admin", Password: "p"}
	text, err := smallMovesConfig([]string{"q.000", "q.001"}, src, tgt, smallMovesTimeout)
	if err != nil {
		t.Fatal(err)
	}
	reportHas(t, text,
		`source = "artemis-studio/artemis"`,
		`amqp_urls      = ["amqp://t:5672"]`,
		"    \"q.000\",\n    \"q.001\",\n",
		`resource "artemis_queue_transfer" "move" {`,
		`for_each = toset(local.queues)`,
		`timeouts = { create = "5m0s" }`,
		`value = { for q, m in artemis_queue_transfer.move : q => m.duration_seconds }`,
	)
}

func smallMovesForReport() *SmallMovesResults {
	res := &SmallMovesResults{Machine: Machine{Commit: "abc", Date: "2026-12-07 16:00 UTC", Cores: 2, LoadAtStart: "1.00 1.00 1.00", LoadAtEnd: "1.50 1.00 1.00"},
		Complete: true, Brokers: "synced", Queues: 3, Count: 50, Size: kib, Parallel: 10, Reps: 3, Seconds: 75}
	moves := [][]float64{{0.5, 0.7, 0.9}, {1.0, 3.0, 0.6}, {9, 9, 9}}
	for i, ds := range moves {
		run := SmallMovesRun{Rep: i + 1, OK: i < 2, Process: ProcessRun{WallSeconds: float64(5 + i), CPUSeconds: 2}, SourceCPU: 1, TargetCPU: 0.5,
			LoadAtStart: "1.00 1.00 1.00", LoadAtEnd: "1.10 1.00 1.00", Check: MigrationCheck{Queues: 3, QueuesOK: 3, Distinct: 150}}
		if !run.OK {
			run.Error = "terraform apply: exit status 1"
		}
		for j, d := range ds {
			run.Moves = append(run.Moves, SmallMove{Queue: string(rune('a' + j)), Seconds: d, SpanSeconds: d + 0.25})
		}
		res.Runs = append(res.Runs, run)
	}
	return res
}

func TestSmallMoves_MediansOverTheCorrectApplies(t *testing.T) {
	md := smallMovesForReport().Medians()
	want := SmallMovesMedians{Applies: 3, OK: 2, Moves: 6, Move: 0.8, Span: 1.05, Apply: 5.5}
	if md.Applies != want.Applies || md.OK != want.OK || md.Moves != want.Moves || !near(md.Move, want.Move) || !near(md.Span, want.Span) || !near(md.Apply, want.Apply) {
		t.Errorf("medians %+v, want %+v", md, want)
	}
}

func TestWriteSmallMoves_TheMedianMoveAgainstItsTargetAndEveryApply(t *testing.T) {
	res := smallMovesForReport()
	var b strings.Builder
	writeSmallMoves(&b, res, "bench/results-small-moves.json")
	md := b.String()
	reportHas(t, md,
		"## Small moves",
		"[bench/results-small-moves.json](bench/results-small-moves.json)",
		"3 queues of 50 x 1 KiB, their target queues created beforehand, moved by one `terraform apply -parallelism=10` of 3 `artemis_queue_transfer` resources; 3 applies",
		"**Median move 0.80 s over 6 moves of 2 correct applies (the target, at most 2 s: met); median span 1.05 s; median apply 5.5 s.**",
		"| 2 | 6.0 | 1.00 | 0.60 | 3.00 | 1.25 | 1.0 | 0.5 | 2.0 | 1.00 1.00 1.00 | 1.10 1.00 1.00 | yes: 3/3 queues, 150 messages once |",
		"| 3 | 7.0 | 9.00 |",
		"**NO**: terraform apply: exit status 1 |",
	)
	res.Runs[0].Moves[0].Seconds, res.Runs[0].Moves[1].Seconds, res.Runs[0].Moves[2].Seconds = 5, 5, 5
	b.Reset()
	writeSmallMoves(&b, res, "r.json")
	reportHas(t, b.String(), "(the target, at most 2 s: **not met**)")
	if md := Markdown(syncedResults(t), ReportOptions{ResultsPath: "r.json", ChartPath: "c.png", SmallMoves: res, SmallMovesPath: "s.json"}); !strings.Contains(md, "## Small moves") {
		t.Error("the report lacks the small moves section it was given")
	}
}
