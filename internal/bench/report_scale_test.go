package bench

import (
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/harness"
)

// scaleResults is a scale curve of three depths: the deepest paged and slower, the copy of the
// middle one failed.
func scaleResults() *Results {
	trial := func(id string, ok bool, rate float64, rssMiB int64) *Trial {
		t := &Trial{Contender: id, Rep: 1, OK: ok, MsgsPerSec: rate, Process: ProcessRun{PeakRSSKiB: rssMiB << 10}}
		if !ok {
			t.Error = "relay: the target went away"
		}
		return t
	}
	point := func(count int, fill float64, paging bool, move, cp *Trial) ScalePoint {
		c := Case{Count: count, Size: kib, Producer: ProducerCore}
		return ScalePoint{Case: c, Name: c.Name(), Fill: harness.FillResult{MsgsPerSec: fill}, SourcePaging: paging, Move: move, Copy: cp,
			CopyCheckSeconds: float64(count) / 10_000, MoveCheckSeconds: float64(count) / 20_000}
	}
	return &Results{Profile: Profile{Name: "scale", Reps: 1, WarmupCount: 50_000}, Complete: true, Brokers: "synced", Seconds: 3725,
		WarmupSourceMicros: []float64{245, 116, 80}, Contenders: []Contender{{ID: ContenderOurs, Label: "ours (relay)"}, {ID: ContenderCopy, Label: "ours (copy)"}},
		Machine: Machine{Commit: "abc", Date: "2026-12-03 08:00 UTC", LoadAtStart: "1.0", LoadAtEnd: "2.0"},
		Scale: &ScaleCurve{Points: []ScalePoint{
			point(10_000, 9000, false, trial(ContenderOurs, true, 4000, 30), trial(ContenderCopy, true, 3000, 31)),
			point(100_000, 15000, false, trial(ContenderOurs, true, 3200, 35), trial(ContenderCopy, false, 0, 40)),
			point(3_000_000, 12000, true, trial(ContenderOurs, true, 2400, 38), trial(ContenderCopy, true, 1500, 36)),
		}}}
}

func TestWriteScale_TablePerDepthAndTheDeepestAgainstTheShallowest(t *testing.T) {
	var b strings.Builder
	res := scaleResults()
	res.Scale.Points[1].Refilled = true
	writeScale(&b, res, "bench/results-scale.json")
	reportHas(t, b.String(),
		"## Scale curve",
		"warmed up (not measured) by 3 moves of 50,000 x 1 KiB with our relay, until the source's CPU per message settled, then once with ours (copy).",
		"([bench/results-scale.json](bench/results-scale.json), profile `scale`, `BENCH_PARTS=scale make bench`): commit `abc`, 2026-12-03 08:00 UTC, 1h2m5s;",
		"| 10,000 | 9,000 | no | 4,000 | 3,000 | 30.0 | 31.0 | 1, 0 | yes, yes |",
		"| 100,000 | 15,000 | no | 3,200 | **FAILED** | 35.0 | – | 10, 5 | yes, **no** |",
		"| 3,000,000 | 12,000 | yes | 2,400 | 1,500 | 38.0 | 36.0 | 300, 150 | yes, yes |",
		"At 3,000,000 our move ran at 2,400 msg/s: 60% of its rate at 10,000 (4,000 msg/s) and 75% of its rate at 100,000 (3,200 msg/s). Its peak RSS stayed between 30.0 and 38.0 MiB",
		// The failed copy at 100,000 is left out of the copy's comparison.
		"At 3,000,000 our copy ran at 1,500 msg/s: 50% of its rate at 10,000 (3,000 msg/s). Its peak RSS stayed between 31.0 and 36.0 MiB",
		"- 100,000 x 1 KiB, Core fill, ours-copy: relay: the target went away",
		"- 100,000 x 1 KiB, Core fill: the copy failed, so the move took a fresh fill",
	)
	if strings.Contains(b.String(), "Incomplete run") {
		t.Error("a complete run is called incomplete")
	}
}

func TestMarkdown_ScaleSectionFromItsOwnResultsOnlyWhenGiven(t *testing.T) {
	res := syncedResults(t)
	if md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "c.png"}); strings.Contains(md, "## Scale curve") {
		t.Error("a page without scale results has a scale curve")
	}
	sc := scaleResults()
	sc.Complete, sc.Error = false, "context canceled"
	sc.Scale.Points = sc.Scale.Points[:1]
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "c.png", Scale: sc, ScalePath: "bench/results-scale.json"})
	reportHas(t, md, "## Scale curve", "> **Incomplete run**: it stopped early (context canceled).", "| 10,000 | 9,000 | no | 4,000 |")
	if strings.Contains(md, "At 10,000 our move") {
		t.Error("one depth is compared with nothing")
	}
}

func TestAllCorrect_CountsTheScaleCurve(t *testing.T) {
	res := scaleResults()
	if AllCorrect(res) {
		t.Error("a curve with a failed copy is all correct")
	}
	res.Scale.Points = res.Scale.Points[2:]
	if !AllCorrect(res) {
		t.Error("a correct curve is not all correct")
	}
	res.Scale.Points = append(res.Scale.Points, ScalePoint{})
	if AllCorrect(res) {
		t.Error("a depth where nothing ran is correct")
	}
}

func TestHeapFromCmdline_TheLastXmxWins(t *testing.T) {
	cmd := []byte("java\x00-Xms512M\x00-Xmx1G\x00-Dx=y\x00-Xmx4G\x00org.apache.activemq.artemis.boot.Artemis\x00run\x00")
	if got := heapFromCmdline(cmd); got != "4G" {
		t.Errorf("heap %q, want 4G", got)
	}
	if got := heapFromCmdline([]byte("java\x00run")); got != "" {
		t.Errorf("heap %q without -Xmx, want none", got)
	}
}

func TestBrokerHealth_SaysWhichBrokerRanOutOfHeapSince(t *testing.T) {
	got := brokerHealth{source: 1, target: 17}.since(brokerHealth{source: 1, target: 0})
	if len(got) != 1 || got[0] != "the target broker logged 17 java.lang.OutOfMemoryErrors (heap exhausted)" {
		t.Errorf("got %q", got)
	}
}
