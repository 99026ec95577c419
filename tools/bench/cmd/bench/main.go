// Command bench runs the benchmarks of `make bench` against the brokers of a running test
// environment (ARTEMIS_TESTENV_DIR) and writes the results as JSON and as BENCHMARKS.md.
// scripts/bench.sh starts and stops that environment around it; run that, not this.
//
// With BENCH_RELAY_CHILD=1 it is instead the child process of one relay run: the benchmark
// re-executes itself so that the memory measured is the relay's alone.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/tools/bench"
)

// exitRunsFailed: the benchmark completed and wrote its results, but some runs lost or
// doubled messages (or failed otherwise).
const exitRunsFailed = 3

func main() {
	if os.Getenv(bench.RelayChildEnv) == "1" {
		os.Exit(bench.RunRelayChild(os.Stdin, os.Stdout))
	}
	os.Exit(run())
}

func run() int {
	profileName := flag.String("profile", "standard", "quick, standard, long or scale (the scale curve alone)")
	resultsPath := flag.String("results", "bench/results.json", "where the raw results go (JSON)")
	markdownPath := flag.String("markdown", "BENCHMARKS.md", "where the report goes")
	chartPath := flag.String("chart", "bench/throughput.png", "the chart's path as BENCHMARKS.md links it (drawn by tools/benchchart)")
	relayUser := flag.String("relay-user", "transfer", "the user our relay runs as: transfer or admin")
	chunk := flag.Int("relay-chunk", 0, "engine ChunkSize (0: the engine's default)")
	batch := flag.Int("relay-batch", 0, "engine BatchSize (0: the engine's default)")
	inFlight := flag.Int64("relay-inflight-bytes", 0, "engine MaxInFlightBytes (0: the engine's default)")
	tuned := flag.Int("tuned-commit", 10_000, "the commit interval of the tuned artemis transfer variants")
	protocols := flag.String("perf-protocols", "CORE,AMQP", "protocols the raw limit is measured over")
	contenders := flag.String("contenders", "", "comma-separated contender ids to run (default: all)")
	cases := flag.String("cases", "", "comma-separated COUNTxSIZE cases (e.g. 100000x1024) instead of the profile's (profile scale: the depths of its curve)")
	reps := flag.Int("reps", 0, "for development: repetitions instead of the profile's")
	breakdown := flag.Int("breakdown", -1, "messages (1 KiB) of the queues the parts of a move are measured on, each on its own; 0: none; -1: the profile's")
	sampleFrom := flag.Int("sample-from", 0, "for development: also sample where the messages are during moves of this many messages or more (always from 1,000,000)")
	depth := flag.Int("depth", -1, "messages (1 KiB) the target's store by depth stores, with and without duplicate ids; 0: none; -1: the profile's")
	resume := flag.Int("resume", -1, "messages (1 KiB) of the move killed and resumed to time its first batch; 0: none; -1: the profile's")
	renderOnly := flag.Bool("render-only", false, "write the report from the existing -results file; run nothing")
	brokers := flag.String("brokers", "", "how the environment's brokers were created, for the report: synced or fast")
	providerDir := flag.String("provider-dir", "", "a folder holding the built terraform-provider-artemis: adds the contender ours (terraform apply)")
	terraformPath := flag.String("terraform", "terraform", "the terraform executable of ours (terraform apply)")
	baselineDir := flag.String("baseline-provider-dir", "", "a folder holding terraform-provider-artemis built from an earlier revision: adds the contender ours (terraform apply) at -baseline-rev on the 100,000 x 1 KiB case")
	baselineRev := flag.String("baseline-rev", "", "the revision the -baseline-provider-dir provider was built from, as the report names it")
	otherResults := flag.String("other-results", "", "results of the same profile on brokers created otherwise, set beside these in the report")
	copyResults := flag.String("copy-results", "", "results of a separate run of contenders ours and ours-copy: the report's copy section when these results have no copy")
	migrationRun := flag.Bool("migration", false, "run the whole-broker migration benchmark instead of the profile, writing -migration-results (no report: render it with -render-only)")
	migrationResults := flag.String("migration-results", "", "the whole-broker migration's results: where -migration writes them (default "+defaultMigrationResults+"), otherwise the report's migration section")
	migrationQueues := flag.Int("migration-queues", 0, "for development: the migration's source queues instead of the layout's 200")
	migrationDeep := flag.Int("migration-deep", 0, "for development: the messages of the migration's deepest queues instead of 100,000")
	migrationReps := flag.Int("migration-reps", bench.DefaultMigrationReps, "rounds of the migration, each contender once per round, their order rotated each round")
	migrationContenders := flag.String("migration-contenders", "", "comma-separated migration contenders to run, of "+strings.Join(bench.MigrationContenderIDs, ", ")+" (default: all; -contenders when this is empty)")
	migrationParallel := flag.Int("migration-parallel", 10, "queues migrated at once: terraform apply -parallelism and the parallel artemis transfer loop's xargs -P")
	smallMovesRun := flag.Bool("small-moves", false, "run the small moves benchmark instead of the profile (ten queues of 50 x 1 KiB moved by one terraform apply), writing -small-moves-results (no report: render it with -render-only)")
	smallMovesResults := flag.String("small-moves-results", "", "the small moves' results: where -small-moves writes them (default "+defaultSmallMovesResults+"), otherwise the report's small moves section")
	smallMovesReps := flag.Int("small-moves-reps", 3, "applies of the small moves, each on freshly filled queues")
	sessionsRun := flag.Bool("sessions", false, "run the management sessions benchmark instead of the profile (Jolokia reads with the console's session kept against Basic authentication each time, on the brokers source and legacy), writing -sessions-results (no report: render it with -render-only)")
	sessionsResults := flag.String("sessions-results", "", "the management sessions' results: where -sessions writes them (default "+defaultSessionsResults+"), otherwise the report's sessions section")
	sessionsRequests := flag.Int("sessions-requests", 1000, "timed Jolokia reads of each sessions run")
	scaleResults := flag.String("scale-results", "", "comma-separated results of runs of profile scale: the report's scale curve section")
	flag.Parse()

	paths := reportPaths{results: *resultsPath, markdown: *markdownPath, chart: *chartPath, other: *otherResults, copy: *copyResults,
		migration: *migrationResults, smallMoves: *smallMovesResults, sessions: *sessionsResults, scale: *scaleResults}
	if *renderOnly {
		return render(paths)
	}
	if *sessionsRun {
		path := *sessionsResults
		if path == "" {
			path = defaultSessionsResults
		}
		return runSessions(bench.SessionsConfig{Requests: *sessionsRequests}, path)
	}
	if *smallMovesRun {
		path := *smallMovesResults
		if path == "" {
			path = defaultSmallMovesResults
		}
		return runSmallMoves(bench.SmallMovesConfig{Reps: *smallMovesReps, Parallel: *migrationParallel, ProviderDir: *providerDir,
			TerraformPath: *terraformPath, Brokers: *brokers}, path)
	}
	if *migrationRun {
		layout := bench.DefaultMigrationLayout()
		if *migrationQueues > 0 {
			layout.Queues = *migrationQueues
		}
		if *migrationDeep > 0 {
			layout.DeepCount = *migrationDeep
		}
		path := *migrationResults
		if path == "" {
			path = defaultMigrationResults
		}
		if *migrationReps < 1 {
			fmt.Fprintf(os.Stderr, "bench: -migration-reps %d: at least 1\n", *migrationReps)
			return 2
		}
		chosen := splitList(*migrationContenders)
		if len(chosen) == 0 {
			chosen = splitList(*contenders)
		}
		return runMigration(bench.MigrationConfig{Layout: layout, Parallel: *migrationParallel, ProviderDir: *providerDir,
			TerraformPath: *terraformPath, Contenders: chosen, Reps: *migrationReps, Brokers: *brokers}, path)
	}

	profile, err := bench.ProfileByName(*profileName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	if *cases != "" {
		parsed, err := bench.ParseCases(*cases)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
		if len(profile.ScaleCases) > 0 {
			profile.ScaleCases = parsed // the depths of the curve
		} else {
			profile.MemoryCases = nil // a development run measures exactly the cases it names
			profile.Cases = parsed
		}
		profile.Name += "-custom"
	}
	if *reps > 0 {
		profile.Reps = *reps
	}
	if *breakdown >= 0 {
		profile.BreakdownCount = *breakdown
	}
	if *resume >= 0 {
		profile.ResumeCount = *resume
	}
	if *depth >= 0 {
		profile.DepthCount = *depth
	}
	ctx, env, work, repo, end, err := startRun("artemis-bench-", profile.Timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	defer end()

	cfg := bench.Config{
		Profile: profile, Env: env, RelayUser: *relayUser,
		RelayTuning:   bench.RelayTuning{ChunkSize: *chunk, BatchSize: *batch, MaxInFlightBytes: *inFlight},
		TunedCommit:   *tuned,
		PerfProtocols: splitList(*protocols),
		Contenders:    splitList(*contenders),
		WorkDir:       work, RepoDir: repo, Log: os.Stderr,
		ProviderDir: *providerDir, TerraformPath: *terraformPath, Brokers: *brokers, SampleFrom: *sampleFrom,
		BaselineProviderDir: *baselineDir, BaselineRev: *baselineRev,
	}
	res, runErr := bench.Run(ctx, cfg)
	if res == nil {
		fmt.Fprintln(os.Stderr, "bench:", runErr)
		return 1
	}
	if !writeResults(*resultsPath, res, runErr, "stopped early", *resultsPath+" and "+*markdownPath+" are") {
		return 1
	}
	if err := writeMarkdown(res, paths); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s and %s in %.0f s\n", *resultsPath, *markdownPath, res.Seconds)
	if !bench.AllCorrect(res) {
		fmt.Fprintf(os.Stderr, "bench: some runs failed (see %s)\n", *markdownPath)
		return exitRunsFailed
	}
	return 0
}

// render rewrites the report from results written earlier, e.g. after the report's wording
// changed, or once the other brokers' results exist: every number still comes from a run.
func render(paths reportPaths) int {
	res, err := readResults(paths.results)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if err := writeMarkdown(res, paths); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

// readResults reads results written earlier and derives their medians again.
func readResults(path string) (*bench.Results, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the results: %w", err)
	}
	var res bench.Results
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	bench.Recompute(&res)
	return &res, nil
}

// reportPaths are the files of the report: the results it is written from, the report itself,
// the chart it links, and the optional results of its other sections (empty: none).
type reportPaths struct {
	results, markdown, chart string
	// other: the same profile on brokers created otherwise; copy: a separate run of our move and
	// copy; migration, smallMoves, sessions: those parts' results; scale: comma-separated runs of profile scale.
	other, copy, migration, smallMoves, sessions, scale string
}

// writeMarkdown writes the report, linking the results, the chart and every other results file
// given relative to it.
func writeMarkdown(res *bench.Results, paths reportPaths) error {
	resultsPath, markdownPath, chartPath, otherPath, copyPath, migrationPath, scalePath :=
		paths.results, paths.markdown, paths.chart, paths.other, paths.copy, paths.migration, paths.scale
	rel := func(p string) string {
		if r, err := filepath.Rel(filepath.Dir(markdownPath), p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	opts := bench.ReportOptions{ResultsPath: rel(resultsPath), ChartPath: rel(chartPath)}
	if otherPath != "" {
		other, err := readResults(otherPath)
		if err != nil {
			return fmt.Errorf("the other brokers' results: %w", err)
		}
		opts.Other, opts.OtherPath = other, rel(otherPath)
	}
	if copyPath != "" {
		cp, err := readResults(copyPath)
		if err != nil {
			return fmt.Errorf("the copy run's results: %w", err)
		}
		opts.Copy, opts.CopyPath = cp, rel(copyPath)
	}
	if migrationPath != "" {
		mig, err := readMigration(migrationPath)
		if err != nil {
			return err
		}
		opts.Migration, opts.MigrationPath = mig, rel(migrationPath)
	}
	if paths.sessions != "" {
		ss, err := readSessions(paths.sessions)
		if err != nil {
			return err
		}
		opts.Sessions, opts.SessionsPath = ss, rel(paths.sessions)
	}
	if paths.smallMoves != "" {
		sm, err := readSmallMoves(paths.smallMoves)
		if err != nil {
			return err
		}
		opts.SmallMoves, opts.SmallMovesPath = sm, rel(paths.smallMoves)
	}
	for _, path := range splitList(scalePath) {
		sc, err := readResults(path)
		if err != nil {
			return fmt.Errorf("the scale curve's results: %w", err)
		}
		if sc.Scale != nil {
			opts.Scale = append(opts.Scale, bench.ScaleRun{Results: sc, Path: rel(path)})
		}
	}
	md := bench.Markdown(res, opts)
	if err := os.WriteFile(markdownPath, []byte(md), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
