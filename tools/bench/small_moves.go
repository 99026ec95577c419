package bench

// The small moves benchmark: several short queues moved by one `terraform apply`, as an
// operator moves a handful of queues of a few messages. What it measures is each move's own time
// (the engine's set-up and end, not its rate) and the apply's wall time around them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// SmallMovesConfig is one run of the small moves benchmark. Zero values take the defaults.
type SmallMovesConfig struct {
	Env *testenv.Env
	// Queues is how many queues one apply moves (default 10), each of Count messages (default
	// 50) of Size bytes (default 1,024).
	Queues, Count, Size int
	// Reps is how many applies run, each on freshly filled queues (default 3).
	Reps int
	// Parallel is terraform's -parallelism (default 10).
	Parallel int
	// ProviderDir and TerraformPath: as Config's; a ProviderDir is required.
	ProviderDir, TerraformPath string
	Brokers                    string
	WorkDir, RepoDir           string
	Log                        io.Writer
}

func (c *SmallMovesConfig) defaults() {
	for _, d := range []struct {
		v   *int
		def int
	}{{&c.Queues, 10}, {&c.Count, 50}, {&c.Size, kib}, {&c.Reps, 3}, {&c.Parallel, 10}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
}

// SmallMovesResults are what one small moves benchmark measured: bench/results-small-moves.json.
type SmallMovesResults struct {
	Machine  Machine         `json:"machine"`
	Started  time.Time       `json:"started"`
	Seconds  float64         `json:"seconds"`
	Complete bool            `json:"complete"`
	Error    string          `json:"error,omitempty"`
	Brokers  string          `json:"brokers,omitempty"`
	Queues   int             `json:"queues"`
	Count    int             `json:"count"`
	Size     int             `json:"size"`
	Parallel int             `json:"parallel"`
	Reps     int             `json:"reps"`
	Runs     []SmallMovesRun `json:"runs"`
}

// SmallMovesRun is one apply moving every queue once.
type SmallMovesRun struct {
	Rep   int    `json:"rep"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Fill is the filling of the source queues before the apply (the target queues are created
	// then too, empty).
	Fill harness.FillResult `json:"fill"`
	// Process is the apply: terraform and its provider.
	Process ProcessRun `json:"process"`
	// Moves are each queue's move, in the order of the queues.
	Moves       []SmallMove    `json:"moves"`
	SourceCPU   float64        `json:"source_cpu_s"`
	TargetCPU   float64        `json:"target_cpu_s"`
	LoadAtStart string         `json:"load_at_start"`
	LoadAtEnd   string         `json:"load_at_end"`
	Check       MigrationCheck `json:"check"`
}

// SmallMove is one queue's move within an apply.
type SmallMove struct {
	Queue string `json:"queue"`
	// Seconds is the resource's own duration_seconds in state: the move as the provider timed it.
	Seconds float64 `json:"duration_s"`
	// SpanSeconds is from terraform's "Creating..." line of the resource to its "Creation
	// complete" line, as the lines arrived: the move with terraform's share around it.
	SpanSeconds float64 `json:"span_s"`
}

// SmallMovesMedians are the figures the report leads with: over every correct apply, the
// median of every move's duration_seconds and of its span, and the median apply wall time.
type SmallMovesMedians struct {
	Applies, OK, Moves int
	Move, Span, Apply  float64
}

// Medians gives the medians over the correct applies.
func (r *SmallMovesResults) Medians() SmallMovesMedians {
	var m SmallMovesMedians
	var moves, spans, applies []float64
	for _, run := range r.Runs {
		m.Applies++
		if !run.OK {
			continue
		}
		m.OK++
		applies = append(applies, run.Process.WallSeconds)
		for _, mv := range run.Moves {
			moves = append(moves, mv.Seconds)
			spans = append(spans, mv.SpanSeconds)
		}
	}
	m.Moves = len(moves)
	m.Move, m.Span, m.Apply = Median(moves), Median(spans), Median(applies)
	return m
}

// moveSpans reads from terraform's timed output how long each artemis_queue_transfer took,
// from its "Creating..." line to its "Creation complete" line, by resource address.
func moveSpans(lines []timedLine) map[string]float64 {
	started := map[string]float64{}
	spans := map[string]float64{}
	for _, l := range lines {
		addr, rest, ok := strings.Cut(l.text, ": ")
		if !ok || !strings.HasPrefix(addr, "artemis_queue_transfer.") {
			continue
		}
		switch {
		case rest == "Creating...":
			started[addr] = l.at
		case strings.HasPrefix(rest, "Creation complete after "):
			if at, ok := started[addr]; ok {
				spans[addr] = l.at - at
			}
		}
	}
	return spans
}

// smallMovesConfig is the apply's configuration: one artemis_queue_transfer per queue (the
// target queues exist beforehand), and an output of each move's duration_seconds.
func smallMovesConfig(queues []string, source, target BrokerAccess, timeout time.Duration) (string, error) {
	var b strings.Builder
	b.WriteString("provider \"artemis\" {}\n\nlocals {\n  queues = [\n")
	for _, q := range queues {
		fmt.Fprintf(&b, "    %q,\n", q)
	}
	fmt.Fprintf(&b, `  ]
}

resource "artemis_queue_transfer" "move" {
  for_each = toset(local.queues)
  source   = { broker = "source", queue = each.key }
  target   = { broker = "target", queue = each.key }
  timeouts = { create = %q }
}

output "durations" {
  value = { for q, m in artemis_queue_transfer.move : q => m.duration_seconds }
}
`, timeout.String())
	return migrationMain(b.String(), source, target)
}

// RunSmallMoves fills the queues, moves them with one apply, checks every message once on the
// target and removes the queues, Reps times. A run stopped early returns what it measured,
// with Complete false.
func RunSmallMoves(ctx context.Context, cfg SmallMovesConfig) (*SmallMovesResults, error) {
	cfg.defaults()
	if cfg.ProviderDir == "" {
		return nil, errors.New("the small moves need the built provider (-provider-dir)")
	}
	res := &SmallMovesResults{Started: time.Now().UTC(), Brokers: cfg.Brokers, Queues: cfg.Queues, Count: cfg.Count,
		Size: cfg.Size, Parallel: cfg.Parallel, Reps: cfg.Reps}
	queues := make([]MigrationQueue, cfg.Queues)
	for i := range queues {
		queues[i] = MigrationQueue{Index: i, Count: cfg.Count, Size: cfg.Size}
	}
	// The migration's driver fills, checks and removes queues of a layout: these queues are one.
	m := &migration{queues: queues, mcfg: MigrationConfig{WorkDir: cfg.WorkDir, RepoDir: cfg.RepoDir, ProviderDir: cfg.ProviderDir,
		TerraformPath: cfg.TerraformPath}, mres: &MigrationResults{Totals: SumMigration(queues)}}
	m.bench = &bench{started: time.Now(), res: &Results{CommandLines: map[string]string{}},
		cfg: Config{Env: cfg.Env, RelayUser: "admin", Contenders: []string{ContenderCoreDflt}, Brokers: cfg.Brokers,
			ProviderDir: cfg.ProviderDir, TerraformPath: cfg.TerraformPath, WorkDir: cfg.WorkDir, RepoDir: cfg.RepoDir, Log: cfg.Log}}
	start := time.Now()
	err := m.setUp(ctx)
	if err == nil {
		res.Machine = m.res.Machine
		for rep := 1; rep <= cfg.Reps; rep++ {
			res.Runs = append(res.Runs, m.smallMoves(ctx, cfg, rep))
			if err = ctx.Err(); err != nil {
				break
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.Machine.LoadAtEnd = LoadAverage()
	if err != nil {
		res.Error = err.Error()
		return res, err
	}
	res.Complete = true
	return res, nil
}

// smallMovesTimeout bounds one apply: the moves take seconds, so only a hang reaches it.
const smallMovesTimeout = 5 * time.Minute

// smallMoves is one repetition: fill, one apply, check, remove.
func (m *migration) smallMoves(ctx context.Context, cfg SmallMovesConfig, rep int) SmallMovesRun {
	run := SmallMovesRun{Rep: rep}
	prefix := m.uniqueTag("small.") + "."
	fail := func(err error) SmallMovesRun {
		run.OK, run.Error = false, err.Error()
		m.logf("small moves %d: FAILED: %v", rep, err)
		return run
	}
	defer m.removeRun(ctx, prefix, false)
	fill, err := m.fillSource(ctx, prefix)
	if err != nil {
		return fail(err)
	}
	run.Fill = fill
	if err := m.checkFilled(ctx, prefix); err != nil {
		return fail(err)
	}
	if err := m.createTargets(ctx, prefix); err != nil {
		return fail(err)
	}
	names := make([]string, len(m.queues))
	for i, q := range m.queues {
		names[i] = queueName(prefix, q)
	}
	ws, err := m.smallMovesWorkspace(names, cfg.Parallel)
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(ws.Dir)

	clock := newOutputClock()
	ws.Log = clock
	run.LoadAtStart = LoadAverage()
	src0, tgt0 := m.brokerCPU()
	pr, applyErr := m.runApply(ctx, ws, smallMovesTimeout, nil)
	src1, tgt1 := m.brokerCPU()
	run.LoadAtEnd = LoadAverage()
	run.Process, run.SourceCPU, run.TargetCPU = pr, (src1 - src0).Seconds(), (tgt1 - tgt0).Seconds()
	clock.mu.Lock()
	spans := moveSpans(clock.lines)
	clock.mu.Unlock()
	var durations map[string]float64
	if applyErr == nil {
		durations, applyErr = smallMovesDurations(ctx, ws)
	}
	for _, name := range names {
		run.Moves = append(run.Moves, SmallMove{Queue: name, Seconds: durations[name],
			SpanSeconds: spans[fmt.Sprintf("artemis_queue_transfer.move[%q]", name)]})
	}
	check, err := m.checkMigration(ctx, prefix, true)
	run.Check = check
	applied := ""
	if applyErr != nil {
		applied = applyErr.Error()
	}
	switch {
	case err != nil:
		return fail(fmt.Errorf("checking the moves: %w (apply: %s)", err, orOK(applied)))
	case applyErr != nil:
		return fail(fmt.Errorf("%w (check: %s)", applyErr, orOK(check.Problem())))
	case !check.OK():
		return fail(errors.New("lost or doubled messages: " + check.Problem()))
	}
	run.OK = true
	sorted := make([]float64, 0, len(run.Moves))
	for _, mv := range run.Moves {
		sorted = append(sorted, mv.Seconds)
	}
	sort.Float64s(sorted)
	m.logf("small moves %d: apply %.1f s, moves median %.2f s (%.2f to %.2f s), broker CPU %.1f s + %.1f s; correct: %d messages once",
		rep, pr.WallSeconds, Median(sorted), sorted[0], sorted[len(sorted)-1], run.SourceCPU, run.TargetCPU, check.Distinct)
	return run
}

// smallMovesWorkspace writes the apply's working folder.
func (m *migration) smallMovesWorkspace(queues []string, parallel int) (*harness.Workspace, error) {
	text, err := smallMovesConfig(queues, m.srcAccess, m.tgtAccess, smallMovesTimeout)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(m.mcfg.WorkDir, "small-")
	if err != nil {
		return nil, fmt.Errorf("a folder for terraform: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(text), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("writing the small moves' configuration: %w", err)
	}
	cli, err := harness.WriteCLIConfig(dir, m.mcfg.ProviderDir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &harness.Workspace{Dir: dir, CLIConfig: cli, Terraform: m.mcfg.TerraformPath,
		Env: []string{fmt.Sprintf("TF_CLI_ARGS_apply=-parallelism=%d", parallel)}}, nil
}

// smallMovesDurations reads each move's duration_seconds from the apply's output, by queue.
func smallMovesDurations(ctx context.Context, ws *harness.Workspace) (map[string]float64, error) {
	raw, err := ws.OutputJSON(ctx, "durations")
	if err != nil {
		return nil, err
	}
	var d map[string]float64
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("reading the moves' duration_seconds: %w", err)
	}
	return d, nil
}
