package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/bench"
)

// defaultSessionsResults is where -sessions writes its results.
const defaultSessionsResults = "bench/results-sessions.json"

// sessionsTimeout bounds the whole sessions benchmark: some thousands of reads per broker.
const sessionsTimeout = 20 * time.Minute

// runSessions runs the management sessions benchmark against the running test environment and
// writes its results to path; a run stopped early writes what it measured beside it.
func runSessions(cfg bench.SessionsConfig, path string) int {
	ctx, env, _, repo, end, err := startRun("artemis-sessions-", sessionsTimeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	defer end()
	cfg.Env, cfg.RepoDir, cfg.Log = env, repo, os.Stderr
	res, runErr := bench.RunSessions(ctx, cfg)
	if res == nil {
		fmt.Fprintln(os.Stderr, "bench:", runErr)
		return 1
	}
	if !writeResults(path, res, runErr, "the sessions benchmark stopped early", path+" is") {
		return 1
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s in %.0f s\n", path, res.Seconds)
	for _, r := range res.Runs {
		if r.Error != "" {
			fmt.Fprintf(os.Stderr, "bench: some sessions runs failed (see %s)\n", path)
			return exitRunsFailed
		}
	}
	return 0
}

// readSessions reads a sessions run's results.
func readSessions(path string) (*bench.SessionsResults, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the sessions' results: %w", err)
	}
	var res bench.SessionsResults
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return &res, nil
}
