package bench

// The whole-broker migration benchmark: a source broker of many queues of long-tailed depths,
// moved to the target broker by one `terraform apply` of a configuration like
// examples/migrate-broker, and by `artemis transfer` run per queue from a shell loop, one at a
// time and several at a time. Each contender gets the same freshly filled source and an empty
// target, and is checked for every message on its target queue exactly once. The contenders run
// in rounds, their order rotated each round, so that each contender's median is over runs spread
// across the benchmark's time rather than bunched in one stretch of it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// MigrationConfig is one run of the migration benchmark.
type MigrationConfig struct {
	Layout MigrationLayout
	Env    *testenv.Env
	// Parallel is how many queues move at once: terraform's -parallelism and the faster loop's
	// xargs -P.
	Parallel int
	// ProviderDir and TerraformPath: as Config's; without a ProviderDir our apply is left out.
	ProviderDir, TerraformPath string
	// Contenders, when not empty, limits the run to these migration contender ids.
	Contenders []string
	// Reps is how many rounds run, each contender once per round; 0 is DefaultMigrationReps.
	Reps    int
	Brokers string
	// WorkDir holds the workspaces and scripts; RepoDir is the checkout (the example, the commit).
	WorkDir, RepoDir string
	Log              io.Writer
}

// Migration contender ids.
const (
	MigrationApply    = "ours-apply"
	MigrationLoop     = "transfer-loop-1"
	MigrationParallel = "transfer-loop-parallel"
)

// MigrationContenderIDs are every migration contender id, in the order of a round.
var MigrationContenderIDs = []string{MigrationApply, MigrationLoop, MigrationParallel}

// DefaultMigrationReps is how many rounds a migration benchmark runs unless told.
const DefaultMigrationReps = 3

// MigrationResults are what one migration benchmark measured: bench/results-migration.json.
type MigrationResults struct {
	Machine  Machine          `json:"machine"`
	Started  time.Time        `json:"started"`
	Seconds  float64          `json:"seconds"`
	Complete bool             `json:"complete"`
	Error    string           `json:"error,omitempty"`
	Brokers  string           `json:"brokers,omitempty"`
	Layout   MigrationLayout  `json:"layout"`
	Totals   MigrationTotals  `json:"totals"`
	Queues   []MigrationQueue `json:"queues"`
	Parallel int              `json:"parallel"`
	// Reps is how many rounds ran (each contender once per round); 0 in results written before
	// there were rounds, whose every contender ran once.
	Reps int `json:"reps,omitempty"`
	// TransferDefaultCommit is the default commit interval `artemis help transfer` states: the
	// loops run artemis transfer with its defaults.
	TransferDefaultCommit int            `json:"transfer_default_commit"`
	Runs                  []MigrationRun `json:"runs"`
}

// MigrationRun is one contender migrating the whole source broker once.
type MigrationRun struct {
	Contender string `json:"contender"`
	Label     string `json:"label"`
	Parallel  int    `json:"parallel"`
	// Round is the round the run was in, from 1; 0 in results written before there were rounds.
	Round int    `json:"round,omitempty"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Fill is the filling of every source queue before this run (all queues together).
	Fill harness.FillResult `json:"fill"`
	// TargetsSeconds is the creation of the target queues before a loop (through the management
	// API, outside the loop's time); our apply declares and creates them within its own time.
	TargetsSeconds float64 `json:"targets_created_s,omitempty"`
	// InventorySeconds is step one of our recipe before the apply (examples/migrate-broker's
	// inventory/main.tf applied, its data sources reading the source's queues, and `terraform
	// output -json` writing them down), outside the apply's time.
	InventorySeconds float64 `json:"inventory_s,omitempty"`
	// PlanSeconds is a standalone `terraform plan` of the apply's configuration, run after step
	// one and before the apply (the source filled, the target empty), outside the apply's time;
	// PlanQueues are the queues it planned (a target queue and a move each).
	PlanSeconds float64 `json:"plan_s,omitempty"`
	PlanQueues  int     `json:"plan_queues,omitempty"`
	// PlanError is why that plan failed, if it did; the apply runs regardless.
	PlanError string `json:"plan_error,omitempty"`
	// Process is the apply (terraform and its provider) or the loop (the shell, xargs and
	// every artemis JVM): wall time, CPU time (rusage of the waited-for children included) and,
	// for the apply, the provider's peak RSS.
	Process ProcessRun `json:"process"`
	// Phases are where our apply's time went (nil for a loop).
	Phases *ApplyPhases `json:"apply_phases,omitempty"`
	// CommandLine is the apply's or the loop's command, password hidden.
	CommandLine string `json:"command_line,omitempty"`
	// Invocations are the artemis transfer processes a loop started (one per non-empty queue).
	Invocations int            `json:"invocations,omitempty"`
	Messages    int64          `json:"messages"`
	Bytes       int64          `json:"bytes"`
	MsgsPerSec  float64        `json:"msgs_per_s"`
	MiBPerSec   float64        `json:"mib_per_s"`
	SourceCPU   float64        `json:"source_cpu_s"`
	TargetCPU   float64        `json:"target_cpu_s"`
	LoadAtStart string         `json:"load_at_start"`
	LoadAtEnd   string         `json:"load_at_end"`
	Check       MigrationCheck `json:"check"`
}

// migration is one migration benchmark in progress; it borrows the move benchmark's clients,
// CLI and broker pids.
type migration struct {
	*bench
	mcfg   MigrationConfig
	mres   *MigrationResults
	queues []MigrationQueue
}

// RunMigration runs cfg.Reps rounds of every contender, their order rotated each round: before
// each run it fills the source broker with the layout, lets the contender migrate every queue
// to the target, checks the target, and removes every queue of the run from both brokers. A run stopped early returns what it measured, with Complete false.
func RunMigration(ctx context.Context, cfg MigrationConfig) (*MigrationResults, error) {
	if err := cfg.Layout.Validate(); err != nil {
		return nil, err
	}
	if cfg.Parallel < 1 {
		return nil, fmt.Errorf("parallel %d: at least 1", cfg.Parallel)
	}
	if cfg.Reps == 0 {
		cfg.Reps = DefaultMigrationReps
	}
	if cfg.Reps < 0 {
		return nil, fmt.Errorf("migration reps %d: at least 1", cfg.Reps)
	}
	for _, id := range cfg.Contenders {
		if !contains(MigrationContenderIDs, id) {
			return nil, fmt.Errorf("migration contender %q: use %s", id, strings.Join(MigrationContenderIDs, ", "))
		}
	}
	queues := cfg.Layout.Draw()
	m := &migration{mcfg: cfg, queues: queues, mres: &MigrationResults{Started: time.Now().UTC(), Brokers: cfg.Brokers,
		Layout: cfg.Layout, Totals: SumMigration(queues), Queues: queues, Parallel: cfg.Parallel, Reps: cfg.Reps}}
	// The move benchmark's set-up gives the admin clients, the CLI, the brokers' pids and the
	// machine; its contenders are narrowed to one that needs no ledger.
	m.bench = &bench{started: time.Now(), res: &Results{CommandLines: map[string]string{}},
		cfg: Config{Env: cfg.Env, RelayUser: "admin", Contenders: []string{ContenderCoreDflt}, Brokers: cfg.Brokers,
			ProviderDir: cfg.ProviderDir, TerraformPath: cfg.TerraformPath, WorkDir: cfg.WorkDir, RepoDir: cfg.RepoDir, Log: cfg.Log}}
	start := time.Now()
	err := m.run(ctx)
	m.mres.Seconds = time.Since(start).Seconds()
	m.mres.Machine.LoadAtEnd = LoadAverage()
	if err != nil {
		m.mres.Error = err.Error()
		return m.mres, err
	}
	m.mres.Complete = true
	return m.mres, nil
}

// migrationContender is one way of migrating the broker.
type migrationContender struct {
	id, label string
	parallel  int
}

func (m *migration) contenders() []migrationContender {
	all := []migrationContender{
		{id: MigrationApply, label: fmt.Sprintf("ours: one terraform apply -parallelism=%d", m.mcfg.Parallel), parallel: m.mcfg.Parallel},
		{id: MigrationLoop, label: "artemis transfer per queue, one at a time", parallel: 1},
		{id: MigrationParallel, label: fmt.Sprintf("artemis transfer per queue, %d at a time", m.mcfg.Parallel), parallel: m.mcfg.Parallel},
	}
	var out []migrationContender
	for _, c := range all {
		if len(m.mcfg.Contenders) > 0 && !contains(m.mcfg.Contenders, c.id) {
			continue
		}
		if c.id == MigrationApply && m.mcfg.ProviderDir == "" {
			m.logf("no provider built (-provider-dir): our apply is left out")
			continue
		}
		out = append(out, c)
	}
	return out
}

func (m *migration) run(ctx context.Context) error {
	if err := m.setUp(ctx); err != nil {
		return err
	}
	m.mres.Machine = m.res.Machine
	m.mres.TransferDefaultCommit = m.res.TransferDefaultCommit
	contenders := m.contenders()
	if len(contenders) == 0 {
		return errors.New("no migration contender left")
	}
	t := m.mres.Totals
	m.logf("migration: %d queues, %s messages (%.0f MiB), deepest %s, %d empty; %s, %s",
		len(m.queues), groupThousands(t.Messages), float64(t.Bytes)/mib, groupThousands(int64(t.Deepest)), t.Empty,
		plural(len(contenders), "contender"), plural(m.mcfg.Reps, "round"))
	for r, round := range rotatedRounds(contenders, m.mcfg.Reps) {
		for _, c := range round {
			m.logf("migration: round %d of %d: %s", r+1, m.mcfg.Reps, c.id)
			run := m.runContender(ctx, c)
			run.Round = r + 1
			m.mres.Runs = append(m.mres.Runs, run)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	return nil
}
