package bench

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

func TestProfiles_StandardHasTheCasesOfIssue6FilledByTheCLIWithThreeRepetitions(t *testing.T) {
	p, err := ProfileByName("standard")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10,000 x 1 KiB, Core fill", "100,000 x 1 KiB, Core fill", "100,000 x 1 KiB, AMQP fill", "200 x 1 MiB, Core fill", "20 x 10 MiB, Core fill"}
	if len(p.Cases) != len(want) {
		t.Fatalf("standard has %d cases, want %d", len(p.Cases), len(want))
	}
	for i, c := range p.Cases {
		if c.Name() != want[i] {
			t.Errorf("case %d is %q, want %q", i, c.Name(), want[i])
		}
	}
	if p.Reps < 3 {
		t.Errorf("standard has %d repetitions, want at least 3", p.Reps)
	}
	long, _ := ProfileByName("long")
	if last := long.Cases[len(long.Cases)-1]; last.Name() != "1,000,000 x 1 KiB, Core fill" || long.Reps < 3 {
		t.Errorf("long ends with %q and has %d repetitions", last.Name(), long.Reps)
	}
	if _, err := ProfileByName("fast"); err == nil {
		t.Error("an unknown profile was accepted")
	}
	if got := p.MessageSizes(); len(got) != 3 || got[0] != kib || got[1] != mib || got[2] != 10*mib {
		t.Errorf("message sizes %v", got)
	}
}

func TestMedian_OddEvenAndEmpty(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestProcessCPU_CountsFieldsAfterTheCommandName(t *testing.T) {
	// A command name with spaces and a parenthesis must not shift the fields; utime is 250 and
	// stime 75 ticks. The rest is a whole line as Linux 6 writes it.
	dir := t.TempDir()
	stat := "4242 (java (x) y) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 75 0 0 20 0 40 0 1000 1 1 " +
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	for name, content := range map[string]string{"4242/stat": stat, "4343/stat": "4343 (java) S 1"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := procfs.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := processCPU(fs, 4242)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Errorf("CPU %v, want %v", got, want)
	}
	if _, err := processCPU(fs, 4343); err == nil {
		t.Error("a short line was accepted")
	}
	if _, err := processCPU(fs, 4444); err == nil {
		t.Error("a process that does not exist has a CPU time")
	}
}

func TestParseStatusField_ReadsVmHWM(t *testing.T) {
	status := "Name:\tbench\nVmPeak:\t  900000 kB\nVmHWM:\t   18345 kB\nVmRSS:\t 17000 kB\n"
	got, err := parseStatusField(status, "VmHWM")
	if err != nil || got != 18345 {
		t.Errorf("VmHWM %d, %v", got, err)
	}
	if _, err := parseStatusField(status, "VmSwap"); err == nil {
		t.Error("a missing field was found")
	}
}

func TestPeakRSSKiB_OfThisProcess(t *testing.T) {
	kib, err := PeakRSSKiB(0)
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if kib <= 0 {
		t.Errorf("peak RSS %d KiB", kib)
	}
}

// A producer report as `artemis perf producer --json` writes it (trimmed): the last interval is
// not listed, the summary counts it.
const producerReport = `[
{"sampleType":"interval","warmup":false,"time":10000,"sent":800,"completed":700},
{"sampleType":"interval","warmup":false,"time":11000,"sent":2000,"completed":2000},
{"sampleType":"interval","warmup":false,"time":12000,"sent":3000,"completed":3000},
{"sampleType":"summary","time":12500,"result":"success","totalSent":7200,"totalCompleted":7200}
]`

func TestParsePerfReport_LeavesOutWarmUpAndCountsTheTail(t *testing.T) {
	got, err := ParsePerfReport([]byte(producerReport), 1)
	if err != nil {
		t.Fatal(err)
	}
	// After the first interval: 2000 + 3000 + a tail of 1500 in 2.5 s.
	if math.Abs(got.MsgsPerSec-2600) > 0.01 || got.Total != 7200 || got.Seconds != 2.5 {
		t.Errorf("got %+v, want 2600 msg/s over 2.5 s of 7200", got)
	}
	short, err := ParsePerfReport([]byte(producerReport), 5)
	if err != nil {
		t.Fatal(err)
	}
	// Asked to leave out more than there is, it keeps the last two intervals.
	if short != got {
		t.Errorf("skipping 5 of 3 intervals: %+v, want %+v", short, got)
	}
	all, err := ParsePerfReport([]byte(producerReport), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Everything, from one second before the first sample: 7200 in 3.5 s.
	if math.Abs(all.MsgsPerSec-7200/3.5) > 0.01 {
		t.Errorf("without skipping: %+v", all)
	}
}

func TestParsePerfReport_ConsumerAndShortRuns(t *testing.T) {
	consumer := `[{"sampleType":"interval","warmup":false,"time":5000,"received":4000},
{"sampleType":"summary","time":5500,"result":"success","totalReceived":5000}]`
	got, err := ParsePerfReport([]byte(consumer), 1)
	if err != nil {
		t.Fatal(err)
	}
	// Too short to leave anything out: 5000 over 1.5 s.
	if math.Abs(got.MsgsPerSec-5000/1.5) > 0.01 {
		t.Errorf("got %+v", got)
	}
	for name, raw := range map[string]string{
		"no summary": `[{"sampleType":"interval","time":1,"completed":1}]`,
		"failed":     `[{"sampleType":"interval","time":1,"completed":1},{"sampleType":"summary","time":2,"result":"failure"}]`,
		"not json":   `Connection brokerURL = tcp://`,
	} {
		if _, err := ParsePerfReport([]byte(raw), 1); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseDefaultCommit_FromTheHelpOfArtemisTransfer(t *testing.T) {
	help := `Usage: artemis transfer [--copy] [--commit-interval=<commitInterval>]
Move messages from one JMS destination towards another JMS destination.
      --commit-interval=<commitInterval>
                   How many messages to transfer before committing the
                     associated transaction. Default: 1000.
      --copy       Copy messages instead of transferring them.
      --receive-timeout=<receiveTimeout>
                   Default: 5000.`
	if got := parseDefaultCommit(help); got != 1000 {
		t.Errorf("default commit %d, want 1000", got)
	}
	if got := parseDefaultCommit("no such option"); got != 0 {
		t.Errorf("default commit %d from nothing", got)
	}
}

func TestTransferArgs_DefaultVariantGivesNoCommitIntervalAndPasswordsAreHidden(t *testing.T) {
	cli := ArtemisCLI{Home: "/opt/artemis", User: "admin", Password: "s3cret"}
	src := BrokerURLs{Core: "tcp://h:1", AMQP: "amqp://h:2"}
	tgt := BrokerURLs{Core: "tcp://h:3", AMQP: "amqp://h:4"}
	cs := Contenders(1000, 10_000)
	dflt := cli.TransferArgs(cs[1], src, tgt, "a", "b", 10)
	if strings.Contains(strings.Join(dflt, " "), "--commit-interval") {
		t.Errorf("the default variant sets a commit interval: %v", dflt)
	}
	amqp := strings.Join(cli.TransferArgs(cs[4], src, tgt, "a", "b", 10), " ")
	for _, want := range []string{"--source-url amqp://h:2", "--target-url amqp://h:4", "--commit-interval 10000", "--message-count 10"} {
		if !strings.Contains(amqp, want) {
			t.Errorf("amqp tuned args %q lack %q", amqp, want)
		}
	}
	shown := cli.CommandLine(placeholders(dflt, map[string]string{"--source-queue": "<source-queue>", "--message-count": "<count>"}))
	if strings.Contains(shown, "s3cret") || !strings.Contains(shown, "--source-password ***") {
		t.Errorf("shown command line %q", shown)
	}
	if !strings.Contains(shown, "--source-queue <source-queue>") || !strings.Contains(shown, "--message-count <count>") {
		t.Errorf("placeholders not applied: %q", shown)
	}
}

func TestEvaluateTargets_MetMissedAndNotMeasured(t *testing.T) {
	contenders := Contenders(1000, 10_000)
	okRun := func(id string, rate, rssMiB float64) Trial {
		return Trial{Contender: id, OK: true, MsgsPerSec: rate, Process: ProcessRun{WallSeconds: 10, PeakRSSKiB: int64(rssMiB * 1024)},
			Relay: &RelayTimes{}}
	}
	small := CaseResult{Case: Case{Count: 10_000, Size: kib}, Name: "10,000 x 1 KiB", PreflightSeconds: []float64{0.5, 0.6, 0.7},
		Runs: []Trial{okRun(ContenderOurs, 3000, 30), okRun(ContenderCoreDflt, 1000, 150)}}
	goal := CaseResult{Case: Case{Count: 100_000, Size: kib}, Name: "100,000 x 1 KiB", Limit: 5000, PreflightSeconds: []float64{2.5, 2.4, 2.6},
		Runs: []Trial{okRun(ContenderOurs, 3000, 70), okRun(ContenderCoreDflt, 1000, 150), okRun(ContenderAMQPTuned, 2000, 150),
			{Contender: ContenderCoreTuned, OK: false, Error: "lost 3"}, okRun(ContenderCopy, 2400, 40), okRun(ContenderCopy, 2100, 65)}}
	cases := []CaseResult{small, goal}
	for i := range cases {
		finishCase(&cases[i], contenders)
	}
	r := cases[1].Ratios
	// The copy's median rate is 2,250 of the move's 3,000; its highest peak RSS is 65 MiB.
	if r.VsTransferDefault != 3 || r.VsBestTransfer != 1.5 || r.BestTransfer != ContenderAMQPTuned || r.VsLimit != 0.6 || r.CopyVsMove != 0.75 {
		t.Errorf("ratios %+v", r)
	}
	if s := cases[1].summary(ContenderCoreTuned); s.OKRuns != 0 || s.Runs != 1 {
		t.Errorf("a failed run counted: %+v", s)
	}
	got := evaluateTargets(cases)
	want := []string{statusMet, statusMissed, statusMissed, statusMissed, statusMet, statusMissed}
	if len(got) != len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(got), len(want), got)
	}
	for i, tg := range got {
		if tg.Status != want[i] {
			t.Errorf("target %q: %s (%s), want %s", tg.Goal, tg.Status, tg.Measured, want[i])
		}
	}
	none := evaluateTargets(cases[:1])
	if none[0].Status != statusNotMeasured || none[1].Status != statusNotMeasured || none[2].Status != statusMet ||
		none[4].Status != statusNotMeasured || none[5].Status != statusNotMeasured {
		t.Errorf("without the 100,000 case: %+v", none)
	}
}

func TestMarkdown_StatesTheProfileTargetsAndFailures(t *testing.T) {
	contenders := Contenders(1000, 10_000)
	cr := CaseResult{Case: Case{Count: 2000, Size: kib}, Name: "2,000 x 1 KiB", Limit: 9000, LimitVia: "CORE",
		Runs: []Trial{{Contender: ContenderOurs, OK: true, MsgsPerSec: 3000, Process: ProcessRun{WallSeconds: 1, PeakRSSKiB: 20480},
			Relay: &RelayTimes{Staging: 0.2, Relay: 0.6}}, {Contender: ContenderCoreDflt, OK: false, Error: "lost or doubled messages: 2 duplicates"}}}
	finishCase(&cr, contenders)
	res := &Results{Profile: Profiles()["quick"], Complete: true, Contenders: contenders, Cases: []CaseResult{cr},
		TransferDefaultCommit: 1000, CommandLines: map[string]string{ContenderCoreDflt: "$ARTEMIS_HOME/bin/artemis transfer ..."}}
	res.Targets = evaluateTargets(res.Cases)
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "bench/throughput.png"})
	reportHas(t, md, "**Quick profile.**", "### 2,000 x 1 KiB", "| ours (relay) | 3,000 |", "**FAILED**",
		"2 duplicates", "**not measured**", "bench/throughput.png", "33% of the raw limit")
}

func TestParseCases_CountTimesSizeAndProducer(t *testing.T) {
	got, err := ParseCases("100000x1024, 20x10485760/core,10x1024/amqp")
	if err != nil || !reflect.DeepEqual(got, []Case{{Count: 100_000, Size: kib}, {Count: 20, Size: 10 * mib, Producer: ProducerCore},
		{Count: 10, Size: kib, Producer: ProducerAMQP}}) {
		t.Errorf("got %v, %v", got, err)
	}
	if name := got[1].Name(); name != "20 x 10 MiB, Core fill" {
		t.Errorf("name %q", name)
	}
	for _, bad := range []string{"", "100000", "0x1024", "10x-1", "axb", "10x1024/openwire"} {
		if _, err := ParseCases(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPhaseClock_SequentialAndOverlappingEngines(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type report struct {
		at              float64
		phase           string
		staged, relayed int64
	}
	for name, tc := range map[string]struct {
		reports []report
		want    RelayTimes
	}{
		"staging then relaying": {
			reports: []report{{1, "staging", 0, 0}, {2, "staging", 2000, 0}, {3, "staging", 4000, 0},
				{3.5, "relaying", 4000, 500}, {7, "relaying", 4000, 4000}, {7, "finishing", 4000, 4000}},
			want: RelayTimes{Move: 8, Setup: 1, Staging: 2, Relay: 3.5, Active: 6, Finish: 1, FirstRelayed: 3.5},
		},
		"staging while relaying": {
			reports: []report{{1, "staging", 0, 0}, {1.5, "relaying", 2000, 0}, {2, "relaying", 2000, 500},
				{4, "relaying", 4000, 2500}, {6, "finishing", 4000, 4000}},
			want: RelayTimes{Move: 8, Setup: 1, Staging: 3, Relay: 4.5, Active: 5, Finish: 2, Overlap: true, FirstRelayed: 2},
		},
	} {
		var c phaseClock
		for _, r := range tc.reports {
			c.observeAt(transfer.Progress{Phase: transfer.Phase(r.phase), Staged: r.staged, Relayed: r.relayed}, at(r.at))
		}
		if got := c.times(t0, at(8)); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", name, got, tc.want)
		}
	}
}

func TestMarkdown_CPUBudgetOfTheGoalCase(t *testing.T) {
	contenders := Contenders(1000, 10_000)
	// 100,000 messages; ours: 10+20+10 s of CPU, artemis transfer: 20+15+10 s.
	cr := CaseResult{Case: Case{Count: goalCase, Size: kib}, Name: "100,000 x 1 KiB", Limit: 8000, LimitVia: "CORE",
		Runs: []Trial{
			{Contender: ContenderOurs, OK: true, MsgsPerSec: 4000, SourceCPU: 20, TargetCPU: 10,
				Process: ProcessRun{WallSeconds: 25, CPUSeconds: 10, PeakRSSKiB: 20480}, Relay: &RelayTimes{}},
			{Contender: ContenderCoreDflt, OK: true, MsgsPerSec: 3500, SourceCPU: 15, TargetCPU: 10,
				Process: ProcessRun{WallSeconds: 29, CPUSeconds: 20}},
		}}
	finishCase(&cr, contenders)
	res := &Results{Profile: Profiles()["standard"], Complete: true, Contenders: contenders, Cases: []CaseResult{cr},
		Machine: Machine{Cores: 2}, TransferDefaultCommit: 1000}
	res.Targets = evaluateTargets(res.Cases)
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "bench/throughput.png"})
	reportHas(t, md,
		"### CPU per message (100,000 x 1 KiB)",
		"| ours (relay) | 100 | 200 | 100 | 400 | 5,000 | 4,000 |",                               // 2 cores / 400 µs
		"| artemis transfer core, commit default 1000 | 200 | 150 | 100 | 450 | 4,444 | 3,500 |", // 2 cores / 450 µs
		"2x artemis transfer is 7,000 msg/s: on 2 cores that leaves 286 µs",
		"cost the two brokers 300 µs per message alone (artemis transfer's run cost them 250)",
		"top out at 6,667 msg/s here (1.90x artemis transfer, 83% of the raw limit)",
	)
}

func TestMarkdown_AMemoryCaseShowsOnlyOurRelay(t *testing.T) {
	contenders := Contenders(1000, 10_000)
	cr := CaseResult{Case: Case{Count: 1_000_000, Size: kib}, Name: "1,000,000 x 1 KiB", OursOnly: true,
		Runs: []Trial{{Contender: ContenderOurs, Rep: 1, OK: true, MsgsPerSec: 4000, Process: ProcessRun{WallSeconds: 250, PeakRSSKiB: 40 << 10}, Relay: &RelayTimes{}}}}
	finishCase(&cr, contenders)
	if len(cr.Summary) != 1 || cr.Summary[0].Contender != ContenderOurs {
		t.Fatalf("summary %+v, want ours alone", cr.Summary)
	}
	profile := Profiles()["standard"]
	res := &Results{Profile: profile, Complete: true, Contenders: contenders, Cases: []CaseResult{cr}, TransferDefaultCommit: 1000}
	res.Targets = evaluateTargets(res.Cases)
	md := Markdown(res, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "bench/throughput.png"})
	reportHas(t, md, "and 1,000,000 x 1 KiB, Core fill by our relay alone, once, for its memory and rate", "Our relay alone, once",
		"| ours (relay) | 4,000 |", "highest 40.0 MiB (1,000,000 x 1 KiB)")
	if strings.Contains(md, "FAILED") {
		t.Error("the memory case reports contenders that did not run as failed")
	}
}

func TestMarkdown_CopyBesideMoveFromASeparateRun(t *testing.T) {
	contenders := Contenders(1000, 10_000)
	run := func(id string, rate, rssMiB float64) Trial {
		return Trial{Contender: id, OK: true, MsgsPerSec: rate, Process: ProcessRun{WallSeconds: 30, PeakRSSKiB: int64(rssMiB * 1024)},
			Relay: &RelayTimes{}}
	}
	goal := CaseResult{Case: Case{Count: 100_000, Size: kib, Producer: ProducerCore}, Name: "100,000 x 1 KiB, Core fill",
		Runs: []Trial{run(ContenderOurs, 3000, 30), run(ContenderCopy, 2400, 40), run(ContenderOurs, 3200, 31),
			{Contender: ContenderCopy, OK: false, Error: "the source counts 99,999 messages after the copy"}}}
	finishCase(&goal, contenders)
	copyRun := &Results{Profile: Profile{Name: "standard-custom", Reps: 2}, Complete: true, Contenders: contenders, Brokers: "synced",
		Machine: Machine{Commit: "abc1234", Date: "2026-12-01", LoadAtStart: "17.8", LoadAtEnd: "16.1"}, Cases: []CaseResult{goal}}
	copyRun.Targets = evaluateTargets(copyRun.Cases)
	main := &Results{Profile: Profiles()["quick"], Complete: true, Contenders: contenders[:1]}
	main.Targets = evaluateTargets(main.Cases)
	md := Markdown(main, ReportOptions{ResultsPath: "bench/results.json", ChartPath: "bench/throughput.png", Copy: copyRun, CopyPath: "bench/results-copy.json"})
	// Move median 3,100, copy 2,400 (its one correct run): 77%.
	reportHas(t, md, "## Copy beside move", "[bench/results-copy.json](bench/results-copy.json)", "commit `abc1234`", "17.8 at the start",
		"| 100,000 x 1 KiB, Core fill | 3,100 | 2,400 | 77% | 40.0, 40.0 | 2/2 / 1/2 |", "at least 70% of the move's rate on the same brokers: 77% (2400 vs 3100 msg/s), **met**",
		"below 64 MiB: highest 40.0 MiB over 1 run (median 40.0 MiB), **met**",
		"| copy of 100,000 x 1 KiB at least 70% of the move's rate on the same brokers | 77% (2400 vs 3100 msg/s), in the separate run of our move and copy (commit `abc1234`, Copy beside move) | met |")
	if without := Markdown(main, ReportOptions{ResultsPath: "bench/results.json"}); strings.Contains(without, "## Copy beside move") {
		t.Error("a report without copy runs has a copy section")
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
