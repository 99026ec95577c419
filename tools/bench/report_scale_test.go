package bench

import (
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
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
		Scale: &ScaleCurve{SourceHeap: "4G", TargetHeap: "4G", SourceGlobalMaxSize: "1G", TargetGlobalMaxSize: "1G", Points: []ScalePoint{
			point(10_000, 9000, false, trial(ContenderOurs, true, 4000, 30), trial(ContenderCopy, true, 3000, 31)),
			point(100_000, 15000, false, trial(ContenderOurs, true, 3200, 35), trial(ContenderCopy, false, 0, 40)),
			point(3_000_000, 12000, true, trial(ContenderOurs, true, 2400, 38), trial(ContenderCopy, true, 1500, 36)),
		}}}
}

func TestWriteScale_TablePerDepthAndTheDeepestAgainstTheShallowest(t *testing.T) {
	var b strings.Builder
	res := scaleResults()
	res.Scale.Points[1].Refilled = true
	res.Scale.Points[2].BrokerErrors = []string{"the target broker logged 2 java.lang.OutOfMemoryErrors (heap exhausted)"}
	writeScale(&b, []ScaleRun{{Results: res, Path: "bench/results-scale.json"}})
	reportHas(t, b.String(),
		"## Scale curve",
		"Before its first depth the brokers were warmed up (not measured) by 3 moves of 50,000 x 1 KiB with our relay, until the source's CPU per message settled, then once with ours (copy).",
		"([bench/results-scale.json](bench/results-scale.json), profile `scale`, `BENCH_PARTS=scale make bench`): commit `abc`, 2026-12-03 08:00 UTC, 1h2m5s;",
		"heap 4G; pages beyond 1G; load average 1.0 at the start",
		"| 10,000 | 4G; pages beyond 1G | 9,000 | no | 4,000 | 3,000 | 30.0 | 31.0 | 1, 0 | yes, yes |",
		"| 100,000 | 4G; pages beyond 1G | 15,000 | no | 3,200 | **FAILED** | 35.0 | – | 10, 5 | yes, **no** |",
		"| 3,000,000 | 4G; pages beyond 1G | 12,000 | yes | 2,400 | 1,500 | 38.0 | 36.0 | 300, 150 | yes, yes |",
		"At 3,000,000 our move ran at 2,400 msg/s: 60% of its rate at 10,000 (4,000 msg/s) and 75% of its rate at 100,000 (3,200 msg/s). Its peak RSS stayed between 30.0 and 38.0 MiB",
		// The failed copy at 100,000 is left out of the copy's comparison.
		"At 3,000,000 our copy ran at 1,500 msg/s: 50% of its rate at 10,000 (3,000 msg/s). Its peak RSS stayed between 31.0 and 36.0 MiB",
		"- 100,000 x 1 KiB, Core fill, heap 4G; pages beyond 1G, ours-copy: relay: the target went away",
		"- 100,000 x 1 KiB, Core fill, heap 4G; pages beyond 1G: the copy failed, so the move took a fresh fill",
		"- 3,000,000 x 1 KiB, Core fill, heap 4G; pages beyond 1G: the target broker logged 2 java.lang.OutOfMemoryErrors (heap exhausted)",
	)
	if strings.Contains(b.String(), "Incomplete run") {
		t.Error("a complete run is called incomplete")
	}
}

func TestMarkdown_ScaleSectionFromItsRunsInOneTable(t *testing.T) {
	res := syncedResults(t)
	if md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "c.png"}); strings.Contains(md, "## Scale curve") {
		t.Error("a page without scale results has a scale curve")
	}
	sc := scaleResults()
	sc.Complete, sc.Error = false, "context canceled"
	sc.Scale.Points = sc.Scale.Points[:1]
	deep := scaleResults()
	deep.Scale = &ScaleCurve{Points: deep.Scale.Points} // written before the heap was recorded
	deep.Scale.Points = deep.Scale.Points[2:]
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "c.png",
		Scale: []ScaleRun{{Results: sc, Path: "bench/results-scale.json"}, {Results: deep, Path: "bench/results-scale-3m.json"}}})
	reportHas(t, md, "## Scale curve", "**Incomplete run**: it stopped early (context canceled); the depths that ran are shown.",
		"([bench/results-scale-3m.json](bench/results-scale-3m.json), profile `scale`",
		// One table of both runs' depths, in order of depth.
		"| 10,000 | 4G; pages beyond 1G | 9,000 | no | 4,000 | 3,000 | 30.0 | 31.0 | 1, 0 | yes, yes |\n| 3,000,000 | 1G; pages beyond half (default) | 12,000 | yes | 2,400 |",
		"At 3,000,000 (heap 1G; pages beyond half (default)) our move ran at 2,400 msg/s: 60% of its rate at 10,000 (4,000 msg/s, heap 4G; pages beyond 1G).")
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

func TestHeadAndTail_KeepsTheEndOfALongError(t *testing.T) {
	long := "relay: run interrupted: " + strings.Repeat("x", 1000) + ": the message was not sent in time"
	got := headAndTail(long)
	if !strings.HasPrefix(got, "relay: run interrupted: ") || !strings.HasSuffix(got, "the message was not sent in time") || len([]rune(got)) > 603 {
		t.Errorf("got %q", got)
	}
	if got := headAndTail("a\nb|c"); got != "a b/c" {
		t.Errorf("got %q", got)
	}
}

func TestGlobalMaxSizeOf_IgnoresTheCommentedExample(t *testing.T) {
	xml := []byte("<core>\n<!-- e.g.\n <global-max-size>100Mb</global-max-size> -->\n<global-max-messages>-1</global-max-messages>\n")
	if got := globalMaxSizeOf(xml); got != "" {
		t.Errorf("got %q from the commented example", got)
	}
	xml = append(xml, []byte("<global-max-size> 1G </global-max-size></core>")...)
	if got := globalMaxSizeOf(xml); got != "1G" {
		t.Errorf("got %q, want 1G", got)
	}
}
