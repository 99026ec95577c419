package bench

import (
	"strings"
	"testing"
)

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
	reportHas(t, md,
		"Two runs on brokers created two ways on this machine: **synced**",
		"(this page's run: profile `standard`, commit `aaa`, 2026-12-01 18:00 UTC), and **fast**",
		"(profile `standard`, commit `bbb`, 2026-11-30 02:48 UTC)",
		"| 100,000 x 1 KiB, Core fill | ours (relay) | 5,000 | 5,000 | 300 | 300 |",
		"| 20 x 10 MiB, Core fill | ours (relay) | 20 | – | 50,000 | – |",
	)
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
	got := section(writeDepth, res)
	reportHas(t, got,
		"| 0 | 100 | 2,000 | no | 80 | 2,000 | no |",
		"| 1,000 | 300 | 2,000 | yes | 60 | 2,000 | yes |",
		"with the duplicate id 100 µs before the address paged and 300 while it paged; without it 80 and 60",
	)
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
