package faults

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// The short profile of `make faults` (one iteration of each kind of makeTestKinds, the copy
// kinds included, 2,000 to 4,000 messages each), in three tests by what the fault strikes, so
// that make test's groups can run them side by side. Each runs against the environment the test
// is pointed at, which it must own: it kills and restarts that environment's brokers and its
// PostgreSQL. `make test` starts one and owns it.

// The kinds of each of the three tests.
var (
	processKinds    = []Kind{KillProvider, KillTerraform, Interrupt, KillProviderCopy, TwoAppliesCopy, KillProviderAtPoint, ProducerRacingQueueDelete}
	serverKinds     = []Kind{KillSource, KillTarget, FailoverTarget, PostgresRestart, TargetFull, ManagementBusy}
	connectionKinds = []Kind{CutSource, CutTarget, StallSource, StallTarget}
)

// TestFaults_ShortProfileProcesses: terraform or the provider killed or interrupted, and two
// applies of one copy.
func TestFaults_ShortProfileProcesses(t *testing.T) {
	runShortProfile(t, processKinds)
}

// TestFaults_ShortProfileServers: a broker or the ledger's PostgreSQL killed or stopped, a full
// target, a held management lock, and a target's failover.
func TestFaults_ShortProfileServers(t *testing.T) {
	runShortProfile(t, serverKinds)
}

// TestFaults_ShortProfileConnections: the relay's connections cut or stalled.
func TestFaults_ShortProfileConnections(t *testing.T) {
	runShortProfile(t, connectionKinds)
}

// TestFaults_ShortProfileCoversMakeTestKinds keeps the three tests above to makeTestKinds, each
// kind once.
func TestFaults_ShortProfileCoversMakeTestKinds(t *testing.T) {
	got := slices.Concat(processKinds, serverKinds, connectionKinds)
	want := makeTestKinds()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the short-profile tests run %v, make test's kinds are %v", got, want)
	}
}

// runShortProfile runs one iteration of each of kinds, as make faults runs it.
func runShortProfile(t *testing.T, kinds []Kind) {
	t.Helper()
	if os.Getenv("TF_ACC") != "1" {
		t.Skip("the fault harness drives the terraform CLI: set TF_ACC=1 (make test does)")
	}
	env := testenv.RequireOwned(t)
	if _, ok := env.Brokers[brNode1]; !ok && slices.Contains(kinds, FailoverTarget) {
		t.Skip("the fault harness needs the cluster nodes for its failover fault: start the environment with `up --cluster` (make test does)")
	}
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tf == "" {
		var err error
		if tf, err = exec.LookPath("terraform"); err != nil {
			t.Skip("no terraform CLI on PATH and no TF_ACC_TERRAFORM_PATH")
		}
	}
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	// As scripts/faults.sh builds it: kill-provider-at-point needs the faultpoints hooks.
	build := exec.Command("go", "build", "-tags", "faultpoints", "-o", filepath.Join(plugins, "terraform-provider-artemis"), ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	// The short profile as make faults runs it, so that SEED=... KIND=... make faults replays
	// an iteration of this test exactly.
	profile := Profiles["short"]
	runSeed := uint64(time.Now().UnixNano() % 1_000_000_000)
	t.Logf("run seed %d; replay one iteration with SEED=<seed> KIND=<kind> make faults", runSeed)
	// Bounded: each apply, the tries of each iteration, and the whole run. The 16 kinds together
	// took 245 s on a quiet machine (14-34 s each) and up to 480 s on a loaded one.
	ctx, cancel := context.WithTimeout(context.Background(), 21*time.Minute)
	defer cancel()
	runs, err := Run(ctx, Config{Env: env, Profile: profile, RunSeed: runSeed, Only: kinds, ProviderDir: plugins, Terraform: tf,
		WorkDir: filepath.Join(dir, "work"), ApplyTimeout: 3 * time.Minute, MaxApplies: 4,
		Deadline: time.Now().Add(17 * time.Minute), Log: testLog{t}})
	if err != nil {
		t.Fatalf("fault harness: %v", err)
	}
	if want := profile.Iterations(kinds); len(runs) != want {
		t.Errorf("%d of %d iterations ran before the deadline", len(runs), want)
	}
	for _, it := range runs {
		if !it.OK {
			t.Errorf("seed %d kind %s (%d messages): %s; notes: %s", it.Seed, it.Kind, it.Count, it.Problem, strings.Join(it.Notes, "; "))
		}
	}
}

// makeTestKinds are the kinds make test runs, one iteration each: every kind but the copy's
// broker kills, cuts and stalls (a move meets the same broker faults here), the anytime kills
// (each times a reference apply first; kill-provider-at-point meets the run's start and end at
// exact points here), the return during a resume (three applies), the return stopped twice
// (five) and the slow manifest read (a stall of up to 10 s after a kill), which make faults
// runs, so that make test stays within CI's time.
func makeTestKinds() []Kind {
	var kinds []Kind
	for _, k := range Kinds {
		switch k.Kind {
		case KillSourceCopy, KillTargetCopy, CutSourceCopy, CutTargetCopy, StallSourceCopy, StallTargetCopy,
			KillProviderAnytime, KillTerraformAnytime, ReturnDuringResume, ReturnInterruptedTwice, SlowManifestRead:
			continue
		}
		kinds = append(kinds, k.Kind)
	}
	return kinds
}

// testLog writes the harness's log lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestNewPlan_SameSeedSamePlan(t *testing.T) {
	for _, k := range Kinds {
		a, b := NewPlan(42, k.Kind, 2000, 20000), NewPlan(42, k.Kind, 2000, 20000)
		if a != b {
			t.Errorf("%s: seed 42 gave %+v, then %+v", k.Kind, a, b)
		}
		if a.Count < 2000 || a.Count > 20000 {
			t.Errorf("%s: count %d outside 2000..20000", k.Kind, a.Count)
		}
		if a.TriggerAt < 0 || a.TriggerAt >= a.Count {
			t.Errorf("%s: trigger %d outside the %d messages", k.Kind, a.TriggerAt, a.Count)
		}
	}
}

func TestSchedule_CoversEveryKindInTurn(t *testing.T) {
	plans := Schedule(7, 2*len(Kinds), nil)
	seen := map[Kind]int{}
	for _, p := range plans {
		seen[p.Kind]++
	}
	for _, k := range Kinds {
		if seen[k.Kind] != 2 {
			t.Errorf("kind %s: %d iterations, want 2", k.Kind, seen[k.Kind])
		}
	}
	again := Schedule(7, 2*len(Kinds), nil)
	for i := range plans {
		if plans[i] != again[i] {
			t.Fatalf("run seed 7 scheduled %+v, then %+v", plans[i], again[i])
		}
	}
}

func TestTally_CountsLostDoubledUnexpectedAndStaging(t *testing.T) {
	msg := func(id any) *amqp.Message { return &amqp.Message{Properties: &amqp.MessageProperties{MessageID: id}} }
	tl := NewTally("f1", 5)
	tl.add(msg("f1-0"), placeTarget)
	tl.add(msg("f1-1"), placeTarget)
	tl.add(msg("f1-1"), placeTarget) // doubled
	tl.add(msg("f1-2"), placeStaging)
	tl.add(msg("f1-3"), placeSource)
	tl.add(msg("f2-0"), placeTarget) // another iteration's
	tl.add(msg("f1-9"), placeTarget) // out of range
	tl.add(msg(uint64(3)), placeTarget)
	// f1-4 is found nowhere: lost.
	got := tl.Counts()
	want := Counts{Delivered: 2, Lost: 1, Doubled: 1, Unexpected: 3, LeftSource: 1, InStaging: 1}
	if got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
}

func TestSchedule_KeepsThePublishedRunsSeedsAndItsFirstKinds(t *testing.T) {
	// The long run published at 10aaae6 had the 12 move kinds; the copy kinds came after it.
	published, err := ReadResults(filepath.Join("..", "..", "faults", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	plans := Schedule(published.RunSeed, len(published.Runs), nil)
	for i, it := range published.Runs {
		if plans[i].Seed != it.Seed {
			t.Fatalf("iteration %d: seed %d, published %d", i+1, plans[i].Seed, it.Seed)
		}
		if i < 12 && plans[i].Kind != it.Kind {
			t.Errorf("iteration %d: kind %s, published %s", i+1, plans[i].Kind, it.Kind)
		}
		// A seed and kind replay the published plan whatever Kinds holds now.
		if p := NewPlan(it.Seed, it.Kind, 2000, 20000); p.Count != it.Count || p.TriggerAt != it.TriggerAt || p.Downtime != it.Downtime {
			t.Errorf("seed %d kind %s: plan %+v, published count %d trigger %d downtime %s", it.Seed, it.Kind, p, it.Count, it.TriggerAt, it.Downtime)
		}
	}
}

func TestSchedule_OnlyTheGivenKindsInTurnWithTheSameSeeds(t *testing.T) {
	all := Schedule(11, 6, nil)
	copies := Schedule(11, 6, []Kind{PostgresRestart, KillProviderCopy})
	for i, p := range copies {
		want := []Kind{PostgresRestart, KillProviderCopy}[i%2]
		if p.Kind != want || p.Seed != all[i].Seed {
			t.Errorf("iteration %d: %+v, want kind %s seed %d", i+1, p, want, all[i].Seed)
		}
	}
	if got := Profiles["long"].Iterations([]Kind{PostgresRestart, KillProviderCopy}); got != 20 {
		t.Errorf("long profile of two kinds: %d iterations, want 20", got)
	}
	if got := Profiles["short"].Iterations(nil); got != len(Kinds) {
		t.Errorf("short profile: %d iterations, want %d", got, len(Kinds))
	}
}

func TestParseKinds(t *testing.T) {
	got, err := ParseKinds("postgres-restart, kill-provider-copy,postgres-restart")
	if err != nil || !slices.Equal(got, []Kind{PostgresRestart, KillProviderCopy}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := ParseKinds("kill-provider,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("an unknown kind: %v", err)
	}
}

func TestNewPlan_PostgresDowntimeIsTwoToEightSeconds(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		p := NewPlan(seed, PostgresRestart, 2000, 4000)
		if p.Downtime < 2*time.Second || p.Downtime > 8*time.Second || p.TriggerAt <= 0 {
			t.Fatalf("seed %d: %+v", seed, p)
		}
	}
}

func TestKinds_OnlyTheCopyKindsCopy(t *testing.T) {
	copies := []Kind{PostgresRestart, KillProviderCopy, KillSourceCopy, KillTargetCopy, CutSourceCopy, CutTargetCopy,
		StallSourceCopy, StallTargetCopy, TwoAppliesCopy}
	for _, k := range Kinds {
		if want := slices.Contains(copies, k.Kind); k.Kind.Copies() != want {
			t.Errorf("%s copies: %v", k.Kind, !want)
		}
	}
}

func TestNewPlan_AnytimeKindsDrawTheirInstantOverTheWholeApply(t *testing.T) {
	for _, kind := range []Kind{KillProviderAnytime, KillTerraformAnytime} {
		early, late := false, false
		for seed := uint64(0); seed < 200; seed++ {
			p := NewPlan(seed, kind, 2000, 4000)
			if p.TriggerAt != 0 || p.AtFraction < 0 || p.AtFraction >= 1 {
				t.Fatalf("%s seed %d: %+v", kind, seed, p)
			}
			early = early || p.AtFraction < 0.05
			late = late || p.AtFraction > 0.95
		}
		// Uniform over [0, 1): 200 draws reach both ends (a miss has odds below 1e-4).
		if !early || !late {
			t.Errorf("%s: 200 seeds drew no instant in the first or the last 5%% of the apply (early %v, late %v)", kind, early, late)
		}
		if !kind.Anytime() || kind.Copies() {
			t.Errorf("%s: anytime %v, copies %v", kind, kind.Anytime(), kind.Copies())
		}
	}
	for _, k := range Kinds {
		if k.Kind.Anytime() != (k.Kind == KillProviderAnytime || k.Kind == KillTerraformAnytime) {
			t.Errorf("%s: anytime %v", k.Kind, k.Kind.Anytime())
		}
	}
}

func TestNewPlan_AtPointDrawsEveryPointOfTheRun(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		p := NewPlan(seed, KillProviderAtPoint, 2000, 4000)
		if !slices.Contains(FaultPoints, p.Point) || p.TriggerAt != 0 {
			t.Fatalf("seed %d: %+v", seed, p)
		}
		seen[p.Point] = true
	}
	if len(seen) != len(FaultPoints) {
		t.Errorf("200 seeds drew %d of the %d points: %v", len(seen), len(FaultPoints), seen)
	}
}

func TestNewPlan_TheNewKindsLeaveTheOldPlansAsTheyWere(t *testing.T) {
	// The published runs replay by (seed, kind): a kind added must not change the plan of one
	// that was there. Seed 42's plan of kill-provider is the one the long runs published.
	p := NewPlan(42, KillProvider, 2000, 20000)
	if p.AtFraction != 0 || p.Count < 2000 || p.TriggerAt == 0 {
		t.Errorf("kill-provider plan changed: %+v", p)
	}
}

func TestTally_CopyCountsTheTargetAndTheSourceApart(t *testing.T) {
	msg := func(id string, deliveries uint32) *amqp.Message {
		return &amqp.Message{Header: &amqp.MessageHeader{DeliveryCount: deliveries}, Properties: &amqp.MessageProperties{MessageID: id}}
	}
	tl := NewTally("f1", 6)
	// Before the copy the source held them in this order (two fill connections interleave).
	var before []*amqp.Message
	for _, id := range []string{"f1-0", "f1-2", "f1-1", "f1-3", "f1-5", "f1-4"} {
		before = append(before, msg(id, 0))
	}
	tl.SetSourceOrder(before)
	for _, id := range []string{"f1-0", "f1-1", "f1-1", "f1-2", "f1-4", "f1-5"} { // f1-1 doubled, f1-3 lost
		tl.add(msg(id, 0), placeTarget)
	}
	for _, id := range []string{"f1-0", "f1-1", "f1-2", "f1-3", "f1-3", "f1-4"} { // f1-2 after f1-1: out of order; f1-3 doubled, f1-5 gone
		tl.add(msg(id, 0), placeSource)
	}
	tl.add(msg("f1-5", 0), placeStaging)
	tl.add(msg("g-1", 0), placeTarget)
	got := tl.CopyCounts()
	want := Counts{Delivered: 5, Lost: 1, Doubled: 1, Unexpected: 1, InStaging: 1, SourceChanged: 2, SourceReordered: 1}
	if got != want {
		t.Errorf("copy counts %+v, want %+v", got, want)
	}

	redelivered := NewTally("f2", 2)
	redelivered.add(msg("f2-0", 0), placeSource)
	redelivered.add(msg("f2-1", 1), placeSource)
	if c := redelivered.CopyCounts(); c.SourceRedelivered != 1 || c.SourceChanged != 0 {
		t.Errorf("a raised delivery count: %+v", c)
	}
}

func TestCopyProblems_NameEveryCount(t *testing.T) {
	it := Iteration{Counts: Counts{Lost: 1, Doubled: 2, SourceChanged: 3, SourceReordered: 4, SourceRedelivered: 5}, StagingQueuesLeft: 6}
	got := strings.Join(copyProblems(it), "; ")
	want := "1 lost (missing on the target); 2 doubled on the target; 3 source messages missing or doubled; " +
		"4 source messages out of order; 5 source messages with a raised delivery count; 6 staging queues made by a copy"
	if got != want {
		t.Errorf("problems %q,\nwant %q", got, want)
	}
	if p := copyProblems(Iteration{}); len(p) != 0 {
		t.Errorf("a clean copy: %v", p)
	}
}

func TestMoveProblems_NameEveryCount(t *testing.T) {
	it := Iteration{Recovered: true, Counts: Counts{Lost: 1, Doubled: 2, Unexpected: 3, InStaging: 4, LeftSource: 5}, StagingQueuesLeft: 6}
	got := strings.Join(moveProblems(it), "; ")
	want := "1 lost; 2 doubled; 3 unexpected; 4 messages in 6 staging queues left; 5 messages left on the source after a successful apply"
	if got != want {
		t.Errorf("problems %q,\nwant %q", got, want)
	}
	if p := moveProblems(Iteration{Counts: Counts{LeftSource: 5}}); len(p) != 0 {
		t.Errorf("an unrecovered run's messages on the source: %v", p)
	}
}

func TestLeaseLapse_WaitsForTheLatestLiveHoldersLease(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	lease := func(holder string, expires time.Duration) *ledger.Lease {
		return &ledger.Lease{Holder: holder, ExpiresAt: now.Add(expires)}
	}
	gone := func(holder string) bool { return holder == "host:41:gone" }
	for name, tc := range map[string]struct {
		runs []ledger.Run
		want time.Time
	}{
		"a live holder's lease":             {runs: []ledger.Run{{Lease: lease("host:42:ab", 90*time.Second)}}, want: now.Add(90 * time.Second)},
		"the latest of two":                 {runs: []ledger.Run{{Lease: lease("host:42:ab", 30*time.Second)}, {Lease: lease("other:7:cd", 60*time.Second)}}, want: now.Add(60 * time.Second)},
		"no lease":                          {runs: []ledger.Run{{}}},
		"no run":                            {},
		"an expired lease":                  {runs: []ledger.Run{{Lease: lease("host:42:ab", -time.Second)}}},
		"a gone holder, taken over at once": {runs: []ledger.Run{{Lease: lease("host:41:gone", 90*time.Second)}}},
	} {
		got, ok := heldUntil(tc.runs, now, gone)
		if ok != !tc.want.IsZero() || !got.Equal(tc.want) {
			t.Errorf("%s: lapse %s %v, want %s", name, got, ok, tc.want)
		}
	}
}

func TestWritePage_HasNoTemplateActionsAndEveryRow(t *testing.T) {
	r := &Results{Profile: "long", Commit: "abc1234", Command: "make faults PROFILE=long", Planned: 2, Seconds: 120,
		Runs: []Iteration{
			{Plan: Plan{Seed: 1, Kind: KillTarget, Count: 100}, Injected: true, Recovered: true, RecoverySeconds: 4, OK: true},
			{Plan: Plan{Seed: 2, Kind: CutSource, Count: 200}, Injected: true, Recovered: true, RecoverySeconds: 2,
				Counts: Counts{Doubled: 3}, Problem: "3 doubled | odd"},
		}}
	page := writePage(t, Page{Runs: []*Results{r}})
	for _, want := range []string{"| `kill-target` | 1 | 1 | 100 | 0 | 0 | – |", "| `cut-source` | 1 | 1 | 200 | 0 | 3 | – |",
		"| **all** | 2 | 2 | 300 | 0 | 3 | – |", "3 doubled \\| odd", "`abc1234`", "`make faults PROFILE=long`",
		"| `postgres-restart` | A **copy**", "Not measured yet."} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}

func TestPage_KeepsEachKindsNewestRunWithItsCommit(t *testing.T) {
	day := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	moves := &Results{Profile: "long", Commit: "10aaae6", Date: day, Planned: 2, File: "faults/results.json", Runs: []Iteration{
		{Plan: Plan{Seed: 1, Kind: KillProvider, Count: 100}, Injected: true, Recovered: true, RecoverySeconds: 20, Applies: 2, OK: true},
		{Plan: Plan{Seed: 2, Kind: KillTarget, Count: 200}, Injected: true, Recovered: true, RecoverySeconds: 10, Applies: 1,
			Counts: Counts{Doubled: 7}, Problem: "7 doubled"},
	}}
	copies := &Results{Profile: "long", Commit: "c0ffee1", Date: day.Add(5 * time.Hour), Planned: 3, Runs: []Iteration{
		{Plan: Plan{Seed: 3, Kind: PostgresRestart, Count: 300}, Injected: true, Recovered: true, RecoverySeconds: 9, Applies: 1, OK: true},
		{Plan: Plan{Seed: 4, Kind: KillProviderCopy, Count: 400}, Injected: true, Recovered: true, RecoverySeconds: 100, Applies: 3,
			Counts: Counts{SourceChanged: 2}, Problem: "2 source messages missing or doubled"},
		{Plan: Plan{Seed: 5, Kind: KillTarget, Count: 500}, Injected: true, Recovered: true, RecoverySeconds: 5, Applies: 1, OK: true},
	}}
	p := Page{Runs: []*Results{copies, moves}}
	secs := p.Sections()
	if len(secs) != 2 || secs[0].Results != moves || !slices.Equal(secs[0].Kinds, []Kind{KillProvider}) ||
		secs[1].Results != copies || !slices.Equal(secs[1].Kinds, []Kind{KillTarget, PostgresRestart, KillProviderCopy}) {
		t.Fatalf("sections %+v", secs)
	}
	page := writePage(t, p)
	for _, want := range []string{
		"## `kill-provider` at `10aaae6`", "| `kill-provider` | 1 | 1 | 100 | 0 | 0 | – |",
		"## Profile `long` at `c0ffee1`", "| `kill-target` | 1 | 1 | 500 |", "| `postgres-restart` | 1 | 1 | 300 | 0 | 0 | 0 |",
		"| `kill-provider-copy` | 1 | 1 | 400 | 0 | 0 | 2 | 0 | 0 | 1 | 3.0 | 100.0 s | 100.0 s |",
		"| **all** | 3 | 3 | 1200 | 0 | 0 | 2 |", "| 4 | `kill-provider-copy` | `c0ffee1` | 400 | 2 source messages missing or doubled |",
		// A failure of a kind a later run measured again stays listed, with that run's commit.
		"| 2 | `kill-target` | `10aaae6` | 200 | 7 doubled (the kind's row is from a later run, at `c0ffee1`) |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "| `kill-target` | 1 | 1 | 200 |") || strings.Contains(page, "target broker, restarted after a pause of 1–6 s. Not measured yet.") {
		t.Errorf("the older kill-target row is on the page, or kill-target is said not measured:\n%s", page)
	}
	if sup := (Page{Runs: []*Results{moves, copies, {Commit: "old", Date: day.Add(-time.Hour), Runs: moves.Runs[1:]}}}).Superseded(); len(sup) != 1 || sup[0].Commit != "old" {
		t.Errorf("superseded %+v", sup)
	}
}

// writePage renders p and returns the page.
func writePage(t *testing.T, p Page) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.md.tmpl")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestFirstErrorLine(t *testing.T) {
	for name, tc := range map[string]struct{ out, want string }{
		"summary and detail": {
			out:  "│ Error: Plugin did not respond\n│ \n│ The plugin encountered an error, and failed\n│ to respond.\n╵\n",
			want: "Plugin did not respond: The plugin encountered an error, and failed to respond.",
		},
		"attribute lines skipped": {
			out:  "Error: Transfer interrupted\n\n  with artemis_queue_transfer.fault,\n  on main.tf line 24, in resource \"artemis_queue_transfer\" \"fault\":\n\nrun r1 stopped\n",
			want: "Transfer interrupted: run r1 stopped",
		},
		"no error block": {out: "a\nb\nc\n", want: "b | c"},
	} {
		if got := firstErrorLine(tc.out); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}
