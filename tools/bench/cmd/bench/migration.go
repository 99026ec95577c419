package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/tools/bench"
)

// defaultMigrationResults is where -migration writes its results.
const defaultMigrationResults = "bench/results-migration.json"

// migrationRoundTimeout bounds one round of a whole migration benchmark: three contenders, each
// filled, moved and checked; the whole benchmark gets one per round.
const migrationRoundTimeout = 150 * time.Minute

// runMigration runs the whole-broker migration benchmark against the running test
// environment and writes its results to path; a run stopped early writes what it measured
// beside it (.incomplete.json) and leaves path alone.
func runMigration(cfg bench.MigrationConfig, path string) int {
	ctx, env, work, repo, end, err := startRun("artemis-migration-", time.Duration(max(cfg.Reps, 1))*migrationRoundTimeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	defer end()
	cfg.Env, cfg.WorkDir, cfg.RepoDir, cfg.Log = env, work, repo, os.Stderr
	res, runErr := bench.RunMigration(ctx, cfg)
	if res == nil {
		fmt.Fprintln(os.Stderr, "bench:", runErr)
		return 1
	}
	if !writeResults(path, res, runErr, "the migration stopped early", path+" is") {
		return 1
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s in %.0f s\n", path, res.Seconds)
	for _, r := range res.Runs {
		if !r.OK {
			fmt.Fprintf(os.Stderr, "bench: some migrations failed (see %s)\n", path)
			return exitRunsFailed
		}
	}
	return 0
}

// readMigration reads a migration run's results.
func readMigration(path string) (*bench.MigrationResults, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the migration's results: %w", err)
	}
	var res bench.MigrationResults
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return &res, nil
}

// writeResults writes res to path and reports whether it did. A run that stopped early
// (runErr) leaves path alone, since it holds the published results, and keeps what it measured
// beside it (.incomplete.json), saying so: stopped is how the message begins, unchanged names
// what is left as it was.
func writeResults(path string, res any, runErr error, stopped, unchanged string) bool {
	if runErr != nil {
		partial := strings.TrimSuffix(path, ".json") + ".incomplete.json"
		if err := writeAnyJSON(partial, res); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		fmt.Fprintf(os.Stderr, "bench: %s: %v\nbench: what ran is in %s; %s unchanged\n", stopped, runErr, partial, unchanged)
		return false
	}
	if err := writeAnyJSON(path, res); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return false
	}
	return true
}

func writeAnyJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the results: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing the results: %w", err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the results: %w", err)
	}
	return nil
}

// startRun is what a benchmark runs in: the test environment, a work folder of its own (named
// from prefix) that end removes, the repository it runs from, and a context that Ctrl-C,
// SIGTERM or timeout stop.
func startRun(prefix string, timeout time.Duration) (ctx context.Context, env *testenv.Env, work, repo string, end func(), err error) {
	if env, err = testenv.Load(); err != nil {
		return nil, nil, "", "", nil, err
	}
	if work, err = os.MkdirTemp("", prefix); err != nil {
		return nil, nil, "", "", nil, fmt.Errorf("a work folder: %w", err)
	}
	if repo, err = os.Getwd(); err != nil {
		_ = os.RemoveAll(work)
		return nil, nil, "", "", nil, fmt.Errorf("the repository's folder: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, env, work, repo, func() { cancel(); stop(); _ = os.RemoveAll(work) }, nil
}
