package faults

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// TestFaults_ShortProfile runs the short profile of `make faults` (one iteration of every fault
// kind, 2,000 to 4,000 messages each) against the environment the test is pointed at, which it must own:
// it kills and restarts that environment's brokers. `make test` starts one and owns it.
func TestFaults_ShortProfile(t *testing.T) {
	if os.Getenv("TF_ACC") != "1" {
		t.Skip("the fault harness drives the terraform CLI: set TF_ACC=1 (make test does)")
	}
	env := testenv.RequireOwned(t)
	if _, ok := env.Brokers[brNode1]; !ok {
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
	build := exec.Command("go", "build", "-o", filepath.Join(plugins, "terraform-provider-artemis"), ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	// The short profile as make faults runs it, so that SEED=... KIND=... make faults replays
	// an iteration of this test exactly.
	profile := Profiles["short"]
	runSeed := uint64(time.Now().UnixNano() % 1_000_000_000)
	t.Logf("run seed %d; replay one iteration with SEED=<seed> KIND=<kind> make faults", runSeed)
	// Bounded: each apply, the tries of each iteration, and the whole run.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	runs, err := Run(ctx, Config{Env: env, Profile: profile, RunSeed: runSeed, ProviderDir: plugins, Terraform: tf,
		WorkDir: filepath.Join(dir, "work"), ApplyTimeout: 3 * time.Minute, MaxApplies: 4,
		Deadline: time.Now().Add(12 * time.Minute), Log: testLog{t}})
	if err != nil {
		t.Fatalf("fault harness: %v", err)
	}
	if len(runs) != profile.Iterations {
		t.Errorf("%d of %d iterations ran before the deadline", len(runs), profile.Iterations)
	}
	for _, it := range runs {
		if !it.OK {
			t.Errorf("seed %d kind %s (%d messages): %s; notes: %s", it.Seed, it.Kind, it.Count, it.Problem, strings.Join(it.Notes, "; "))
		}
	}
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
	plans := Schedule(7, 2*len(Kinds), "")
	seen := map[Kind]int{}
	for _, p := range plans {
		seen[p.Kind]++
	}
	for _, k := range Kinds {
		if seen[k.Kind] != 2 {
			t.Errorf("kind %s: %d iterations, want 2", k.Kind, seen[k.Kind])
		}
	}
	again := Schedule(7, 2*len(Kinds), "")
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

func TestWritePage_HasNoTemplateActionsAndEveryRow(t *testing.T) {
	r := &Results{Profile: "long", Commit: "abc1234", Command: "make faults PROFILE=long", Planned: 2, Seconds: 120,
		Runs: []Iteration{
			{Plan: Plan{Seed: 1, Kind: KillTarget, Count: 100}, Injected: true, Recovered: true, RecoverySeconds: 4, OK: true},
			{Plan: Plan{Seed: 2, Kind: CutSource, Count: 200}, Injected: true, Recovered: true, RecoverySeconds: 2,
				Counts: Counts{Doubled: 3}, Problem: "3 doubled | odd"},
		}}
	path := filepath.Join(t.TempDir(), "page.md.tmpl")
	if err := r.WritePage(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	for _, want := range []string{"| `kill-target` | 1 | 1 | 100 | 0 | 0 |", "| `cut-source` | 1 | 1 | 200 | 0 | 3 |",
		"| **all** | 2 | 2 | 300 | 0 | 3 |", "3 doubled \\| odd", "`abc1234`", "`make faults PROFILE=long`", "postgres-restart"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}

func TestTransferConfig_NamesBothKeysAndTheTimeout(t *testing.T) {
	key := BrokerKey{AMQPURLs: []string{"amqp://127.0.0.1:1", "amqp://127.0.0.1:2"}, ManagementURL: "http://127.0.0.1:3/console/jolokia",
		Username: "transfer", Password: "pw\"x"}
	got := transferConfig(key, key, "src.q", "tgt.q", 4*time.Minute)
	for _, want := range []string{`amqp_urls      = ["amqp://127.0.0.1:1", "amqp://127.0.0.1:2"]`, `password       = "pw\"x"`,
		`source = { broker = "source", queue = "src.q" }`, `target = { broker = "target", queue = "tgt.q" }`, `timeouts = { create = "4m0s" }`} {
		if !strings.Contains(got, want) {
			t.Errorf("configuration lacks %s:\n%s", want, got)
		}
	}
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
