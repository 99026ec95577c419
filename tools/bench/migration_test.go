package bench

import (
	"reflect"
	"strings"
	"testing"
)

func TestMigrationLayout_DrawsTheSameLongTailFromTheSameSeed(t *testing.T) {
	l := DefaultMigrationLayout()
	queues := l.Draw()
	if !reflect.DeepEqual(queues, l.Draw()) {
		t.Fatal("two draws of one layout differ")
	}
	other := l
	other.Seed++
	if reflect.DeepEqual(queues, other.Draw()) {
		t.Error("another seed draws the same queues")
	}
	if len(queues) != 200 {
		t.Fatalf("%d queues, want 200", len(queues))
	}
	deep, mid, large := 0, 0, 0
	for i, q := range queues {
		if q.Index != i {
			t.Fatalf("queue %d has index %d", i, q.Index)
		}
		switch {
		case q.Count == 100_000 && q.Size == kib:
			deep++
		case q.Count == 10_000 && q.Size == kib:
			mid++
		case q.Size == mib:
			large++
			if q.Count != 5 {
				t.Errorf("large queue %d holds %d messages, want 5", i, q.Count)
			}
		case q.Count < 0 || q.Count > 999 || q.Size != kib:
			t.Errorf("short queue %d holds %d x %d", i, q.Count, q.Size)
		}
	}
	if deep != 3 || mid != 4 || large != 3 {
		t.Errorf("%d deep, %d mid, %d large queues; want 3, 4, 3", deep, mid, large)
	}
	tot := SumMigration(queues)
	if tot.Empty < 20 || tot.Empty > 60 {
		t.Errorf("%d empty queues, want about a fifth of 190", tot.Empty)
	}
	if tot.Short+tot.Empty+deep+mid+large != 200 || tot.Short < 130 {
		t.Errorf("%d short and %d empty queues: most should be short", tot.Short, tot.Empty)
	}
	if tot.LargeMessages != 15 || tot.Deepest != 100_000 {
		t.Errorf("%d large messages, deepest %d; want 15 and 100,000", tot.LargeMessages, tot.Deepest)
	}
	// The short queues spread over every decade, not bunched at the top.
	decades := map[int]int{}
	for _, q := range queues {
		if q.Count > 0 && q.Count < 1000 && q.Size == kib {
			decades[len(strings.TrimLeft(groupThousands(int64(q.Count)), "-"))]++
		}
	}
	for d := 1; d <= 3; d++ {
		if decades[d] < 20 {
			t.Errorf("only %d short queues of %d digits: %v", decades[d], d, decades)
		}
	}
}

func TestMigrationLayout_ValidateRefusesWhatDoesNotFit(t *testing.T) {
	l := DefaultMigrationLayout()
	l.Queues = 5
	if l.Validate() == nil {
		t.Error("10 special queues fit in 5")
	}
	l = DefaultMigrationLayout()
	l.EmptyPercent = 101
	if l.Validate() == nil {
		t.Error("101% empty accepted")
	}
	if err := DefaultMigrationLayout().Validate(); err != nil {
		t.Error(err)
	}
}

func TestMigrationMain_PointsTheExampleAtTheBrokers(t *testing.T) {
	example := "variable \"x\" {}\n\nprovider \"artemis\" {}\n\nresource \"artemis_queue\" \"new\" {}\n"
	src := BrokerAccess{AMQPURL: "amqp://127.0.0.1:1", ManagementURL: "http://127.0.0.1:2/console/jolokia", Username: "admin", Password: "s3cret"}
	tgt := BrokerAccess{AMQPURL: "amqp://127.0.0.1:3", ManagementURL: "http://127.0.0.1:4/console/jolokia", Username: "admin", Password: "s3cret"}
	got, err := migrationMain(example, src, tgt)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`artemis = { source = "artemis-studio/artemis" }`,
		"    source = {\n      amqp_urls      = [\"amqp://127.0.0.1:1\"]",
		"    target = {\n      amqp_urls      = [\"amqp://127.0.0.1:3\"]",
		`resource "artemis_queue" "new" {}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the configuration lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `provider "artemis" {}`) {
		t.Error("the empty provider block is still there")
	}
	if _, err := migrationMain("no provider here", src, tgt); err == nil {
		t.Error("an example without a provider block accepted")
	}
}

func TestLoopTransferCommand_TakesQueueAndDepthFromXargsAndNoPassword(t *testing.T) {
	m := &migration{bench: &bench{cli: ArtemisCLI{Home: "/opt/artemis", User: "admin", Password: "s3cret"},
		srcURLs: BrokerURLs{Core: "tcp://127.0.0.1:61616"}, tgtURLs: BrokerURLs{Core: "tcp://127.0.0.1:61716"}}}
	got, err := m.loopTransferCommand()
	if err != nil {
		t.Fatal(err)
	}
	want := `"$ARTEMIS_HOME/bin/artemis" transfer --silent --source-url tcp://127.0.0.1:61616 --source-user "$ARTEMIS_USER" --source-password "$ARTEMIS_PASSWORD" ` +
		`--source-protocol core --source-queue "$0" --target-url tcp://127.0.0.1:61716 --target-user "$ARTEMIS_USER" --target-password "$ARTEMIS_PASSWORD" ` +
		`--target-protocol core --target-queue "$0" --message-count "$1"`
	if got != want {
		t.Errorf("command\n got %s\nwant %s", got, want)
	}
	m.srcURLs.Core = "tcp://127.0.0.1:1'"
	if _, err := m.loopTransferCommand(); err == nil {
		t.Error("a quote in a URL accepted into the shell command")
	}
}

func TestTransferTotals_CountsEveryRunsTotal(t *testing.T) {
	out := "Connection brokerURL = tcp://x\nTransferred 1001 messages of 1001\nTransferred a total of 2000 messages\n" +
		"Transferred a total of 7 messages\nTransferred a total of 0 messages\n"
	if runs, moved := transferTotals(out); runs != 3 || moved != 2007 {
		t.Errorf("%d runs, %d moved; want 3, 2007", runs, moved)
	}
}

func migrationResultsForReport() *MigrationResults {
	l := DefaultMigrationLayout()
	queues := l.Draw()
	tot := SumMigration(queues)
	run := func(id, label string, parallel int, wall, src, tgt float64) MigrationRun {
		return MigrationRun{Contender: id, Label: label, Parallel: parallel, OK: true, Process: ProcessRun{WallSeconds: wall, CPUSeconds: 30},
			Messages: tot.Messages, Bytes: tot.Bytes, MsgsPerSec: float64(tot.Messages) / wall, SourceCPU: src, TargetCPU: tgt,
			Invocations: 150, TargetsSeconds: 2.5, CommandLine: "cmd-" + id,
			Check: MigrationCheck{Queues: 200, QueuesOK: 200, Distinct: tot.Messages}}
	}
	apply := run(MigrationApply, "ours: one terraform apply -parallelism=10", 10, 100, 80, 40)
	apply.Phases = &ApplyPhases{PlanSeconds: 12, ObjectsSeconds: 30, FirstMoveSeconds: 20, LastMoveSeconds: 99, Moves: 200, MoveMedian: 3, MoveMax: 60,
		MoveSum: 700, Objects: 600, ProviderCPU: 18}
	apply.InventorySeconds = 4.5
	apply.PlanSeconds, apply.PlanQueues = 6.5, 200
	apply.LoadAtStart, apply.LoadAtEnd = "1.00 0.90 0.80", "1.90 1.00 0.80"
	return &MigrationResults{Machine: Machine{Commit: "abc", Date: "2026-12-03 08:00 UTC", Cores: 2, LoadAtStart: "1.50 1.00 0.50", LoadAtEnd: "2.00 1.00 0.50"},
		Complete: true, Brokers: "synced", Layout: l, Totals: tot, Queues: queues, Parallel: 10, TransferDefaultCommit: 1000,
		Runs: []MigrationRun{
			apply,
			run(MigrationLoop, "artemis transfer per queue, one at a time", 1, 800, 20, 20),
			run(MigrationParallel, "artemis transfer per queue, 10 at a time", 10, 400, 40, 20),
		}}
}

func TestWriteMigration_TableAndTheRatioToTheFasterLoop(t *testing.T) {
	res := migrationResultsForReport()
	var b strings.Builder
	writeMigration(&b, res, "bench/results-migration.json")
	md := b.String()
	msgs := groupThousands(res.Totals.Messages)
	reportHas(t, md,
		"## Migration of a whole broker",
		"[bench/results-migration.json](bench/results-migration.json)",
		"200 queues, "+msgs+" messages",
		"3 of 100,000 x 1 KiB, 4 of 10,000 x 1 KiB, 3 of 5 x 1 MiB (15 large messages",
		"| ours: one terraform apply -parallelism=10 | 1 of 1 | 100.0 | "+msgs+" |",
		"| 1 | ours: one terraform apply -parallelism=10 | 100.0 |",
		"| 80.0 | 40.0 | 30.0 | 6.5 | 1.00 0.90 0.80 | 1.90 1.00 0.80 | yes: 200/200 queues, "+msgs+" messages once |",
		"**Our apply against the faster artemis transfer loop (artemis transfer per queue, 10 at a time): 0.25x its wall time (100.0 s against 400.0 s), 4.00x its rate; source broker CPU 2.00x (80.0 s against 40.0 s), target broker CPU 2.00x.**",
		"**Plan of 200 queues: 6.5 s** (`terraform plan -parallelism=10` of the apply's configuration alone",
		"`cmd-transfer-loop-1`",
		"- artemis transfer per queue, 10 at a time: the same pipeline with `-P 10`, 150 `artemis transfer` runs",
		"until the first resource was created at 12 s; the 600 target addresses, address settings and queues created by 30 s; the first queue's move started at 20 s and the last ended at 99 s. A move took median 3 s, longest 60 s, 700 s added up over 200 moves, 10 at a time at most. Of the client CPU, 18.0 s was the provider's (polled) and 12.0 s terraform's.",
	)

	// Results from before the rounds counted step one in the brokers' CPU, and had no plan.
	reportHas(t, md, "writing them down, ran before the apply, not counted in its wall time but in the brokers' CPU (step one took 4.5 s).")
	res.Reps = 1
	b.Reset()
	writeMigration(&b, res, "bench/results-migration.json")
	md = b.String()
	reportHas(t, md, "Step one of the recipe, `inventory/main.tf` applied (its data sources read the source's queues) and `terraform output -json` writing them down, and then a `terraform plan` of the configuration alone (timed: the plan above), ran before the apply, not counted in its wall time or the brokers' CPU (step one took 4.5 s).")
	if strings.Contains(md, "was shared") {
		t.Error("a load at the cores' count is called shared")
	}
	res.Machine.LoadAtEnd = "17.25 16.16 9.43"
	res.Runs[2].OK, res.Runs[2].Error = false, "lost or doubled messages: 1 of 200 queues wrong"
	res.Runs[2].Check.QueuesOK = 199
	res.Runs[2].Check.Problems = []string{"mig.x.007: 3 messages left on the source"}
	b.Reset()
	writeMigration(&b, res, "r.json")
	reportHas(t, b.String(),
		"| **NO**: 1 of 200 queues wrong; mig.x.007: 3 messages left on the source |",
		"| artemis transfer per queue, 10 at a time | **0 of 1** |",
		"faster artemis transfer loop (artemis transfer per queue, one at a time): 0.12x its wall time",
		"Failed: artemis transfer per queue, 10 at a time: lost or doubled messages",
		"> This machine has 2 cores and was shared: a load average above 2 means other work",
	)
}

func TestWriteMigration_RoundsGiveMediansAndEveryRun(t *testing.T) {
	res := migrationResultsForReport()
	res.Reps = 3
	var runs []MigrationRun
	// Three rounds, the order rotated; the loop's slowest round and our failed one stay out of the
	// medians but in the table of every run.
	walls := map[string][]float64{MigrationApply: {100, 90, 0}, MigrationLoop: {800, 700, 900}, MigrationParallel: {400, 300, 500}}
	srcs := map[string][]float64{MigrationApply: {80, 60, 70}, MigrationLoop: {20, 20, 20}, MigrationParallel: {40, 30, 50}}
	for r, round := range rotatedRounds(res.Runs, 3) {
		for _, c := range round {
			c.Round = r + 1
			c.Process.WallSeconds, c.SourceCPU = walls[c.Contender][r], srcs[c.Contender][r]
			if c.Contender == MigrationApply {
				c.PlanSeconds = []float64{6, 8, 7}[r]
				if r == 2 {
					c.OK, c.Error = false, "terraform apply: exit status 1"
				}
			}
			runs = append(runs, c)
		}
	}
	res.Runs = runs
	sums := SummarizeMigration(runs)
	if len(sums) != 3 || sums[0].Contender != MigrationApply || sums[0].OK != 2 || sums[0].Runs != 3 || sums[0].Wall != 95 || sums[0].SourceCPU != 70 || sums[0].Plan != 7 || sums[0].Plans != 3 {
		t.Fatalf("our summary %+v", sums[0])
	}
	if s := sums[2]; s.Wall != 400 || s.SourceCPU != 40 || s.OK != 3 {
		t.Errorf("the parallel loop's summary %+v", s)
	}
	var b strings.Builder
	writeMigration(&b, res, "r.json")
	md := b.String()
	reportHas(t, md,
		"The contenders ran in 3 rounds, each contender once per round, the order rotated by one each round",
		"Medians over each contender's correct runs:",
		"| ours: one terraform apply -parallelism=10 | 2 of 3 | 95.0 |",
		"**Our apply's median against the median of the faster artemis transfer loop (artemis transfer per queue, 10 at a time): 0.24x its wall time (95.0 s against 400.0 s), 4.21x its rate; source broker CPU 1.75x (70.0 s against 40.0 s)",
		"**Plan of 200 queues: 7.0 s** (median of 3, `terraform plan -parallelism=10`",
		"| 2 | artemis transfer per queue, one at a time | 700.0 |",
		"| 3 | ours: one terraform apply -parallelism=10 | **FAILED** |",
		"(step one took 4.5, 4.5 and 4.5 s)",
	)
	if strings.Count(md, "- artemis transfer per queue, one at a time:") != 1 {
		t.Error("how a contender ran is told more than once")
	}
}

func TestMarkdown_HasTheMigrationSectionOnlyWhenGiven(t *testing.T) {
	res := syncedResults(t)
	if md := Markdown(res, ReportOptions{ResultsPath: "r.json", ChartPath: "c.png"}); strings.Contains(md, "Migration of a whole broker") {
		t.Error("a report without migration results has the section")
	}
	md := Markdown(res, ReportOptions{ResultsPath: "r.json", ChartPath: "c.png", Migration: migrationResultsForReport(), MigrationPath: "m.json"})
	reportHas(t, md, "## Migration of a whole broker", "## Results by case")
	if strings.Index(md, "## Migration of a whole broker") > strings.Index(md, "## Results by case") {
		t.Error("the migration section comes after the cases")
	}
}

func TestApplyPhases_FromTerraformsTimedOutput(t *testing.T) {
	c := newOutputClock()
	lines := []timedLine{
		{1, `data.artemis_queue.old["q1"]: Reading...`},
		{9.5, `artemis_address.new["q1"]: Creating...`},
		{10, `artemis_address.new["q1"]: Creation complete after 0s [id=target/q1]`},
		{12, `artemis_queue.new["q1"]: Creation complete after 1s [id=target/q1]`},
		{13, `artemis_queue_transfer.move["q1"]: Creating...`},
		{20, `artemis_queue_transfer.move["q2"]: Creating...`},
		{23, `artemis_queue_transfer.move["q2"]: Still creating... [10s elapsed]`},
		{40, `artemis_queue_transfer.move["q1"]: Creation complete after 27s [id=x]`},
		{95, `artemis_queue_transfer.move["q2"]: Creation complete after 1m15s [id=y]`},
	}
	ph := applyPhases(lines)
	want := ApplyPhases{PlanSeconds: 9.5, ObjectsSeconds: 12, FirstMoveSeconds: 13, LastMoveSeconds: 95, Moves: 2, MoveMedian: 51, MoveMax: 75, MoveSum: 102, Objects: 2}
	if ph == nil || *ph != want {
		t.Errorf("phases %+v, want %+v", ph, want)
	}
	if applyPhases(nil) != nil {
		t.Error("phases of no output")
	}
	// The clock keeps only the marking lines, split across writes.
	_, _ = c.Write([]byte("artemis_queue.new[\"a\"]: Crea"))
	_, _ = c.Write([]byte("ting...\nPlan: 4 to add\nartemis_queue.new[\"a\"]: Creation complete after 2s\n"))
	if got := len(c.lines); got != 2 {
		t.Errorf("the clock kept %d lines, want 2: %+v", got, c.lines)
	}
	if ph := c.Phases(); ph == nil || ph.Objects != 1 {
		t.Errorf("clock phases %+v", ph)
	}
}
