package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/bench"
)

// defaultSmallMovesResults is where -small-moves writes its results.
const defaultSmallMovesResults = "bench/results-small-moves.json"

// smallMovesTimeout bounds the whole small moves benchmark: a few applies of seconds each.
const smallMovesTimeout = 30 * time.Minute

// runSmallMoves runs the small moves benchmark against the running test environment and writes
// its results to path; a run stopped early writes what it measured beside it (.incomplete.json).
func runSmallMoves(cfg bench.SmallMovesConfig, path string) int {
	ctx, env, work, repo, end, err := startRun("artemis-small-moves-", smallMovesTimeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	defer end()
	cfg.Env, cfg.WorkDir, cfg.RepoDir, cfg.Log = env, work, repo, os.Stderr
	res, runErr := bench.RunSmallMoves(ctx, cfg)
	if res == nil {
		fmt.Fprintln(os.Stderr, "bench:", runErr)
		return 1
	}
	if !writeResults(path, res, runErr, "the small moves stopped early", path+" is") {
		return 1
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s in %.0f s\n", path, res.Seconds)
	for _, r := range res.Runs {
		if !r.OK {
			fmt.Fprintf(os.Stderr, "bench: some small moves failed (see %s)\n", path)
			return exitRunsFailed
		}
	}
	return 0
}

// readSmallMoves reads a small moves run's results.
func readSmallMoves(path string) (*bench.SmallMovesResults, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the small moves' results: %w", err)
	}
	var res bench.SmallMovesResults
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return &res, nil
}
