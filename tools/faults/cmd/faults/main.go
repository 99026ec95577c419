// Command faults runs the fault harness against the test environment it is pointed at
// (ARTEMIS_TESTENV_FILE) and owns (ARTEMIS_TESTENV_OWNER): scripts/faults.sh starts one and
// runs this. It writes the results and the docs template of the fault-tolerance page.
//
// Exit status: 0 when every iteration was correct; 3 when the results were written but an
// iteration lost, doubled or did not recover; 1 when nothing was written.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/tools/faults"
)

func main() { os.Exit(run()) }

func run() int {
	profile := flag.String("profile", "short", "short (one iteration per fault kind) or long (10 per kind)")
	iterations := flag.Int("iterations", 0, "iterations instead of the profile's number (its number per kind, times the kinds)")
	seed := flag.String("seed", "", "replay the one iteration with this seed (needs -kind)")
	kind := flag.String("kind", "", "with -seed: its kind; without: run only these kinds (comma-separated), in turn")
	runSeed := flag.Uint64("run-seed", uint64(time.Now().UnixNano()%1_000_000_000), "seed of the whole run's schedule")
	providerDir := flag.String("provider-dir", "", "folder holding the built terraform-provider-artemis (required)")
	terraform := flag.String("terraform", "terraform", "the terraform CLI")
	work := flag.String("work", "", "folder for the iterations' terraform workspaces (required)")
	resultsPath := flag.String("results", "", "write results JSON here")
	page := flag.String("page", "", "write the docs template of the fault-tolerance page here")
	published := flag.String("published", "", "folder of the published results (faults/): the page shows each kind's newest run among them and this one")
	applyTimeout := flag.Duration("apply-timeout", 4*time.Minute, "bound of one terraform apply")
	maxApplies := flag.Int("max-applies", 5, "applies of one iteration, the first included")
	budget := flag.Duration("budget", 3*time.Hour, "no iteration starts after this much time")
	commit := flag.String("commit", "", "the commit, for the page")
	command := flag.String("command", "make faults", "the command line, for the page")
	verbose := flag.Bool("v", false, "print terraform's output")
	from := flag.String("from", "", "run nothing: write -page from the results in this folder (faults/) or file, after a change of the page's text")
	flag.Parse()
	if *from != "" {
		if err := rewritePage(*from, *page); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			return 1
		}
		return 0
	}
	if *providerDir == "" || *work == "" {
		fmt.Fprintln(os.Stderr, "faults: -provider-dir and -work are required (scripts/faults.sh gives them)")
		return 1
	}
	prof, ok := faults.Profiles[*profile]
	if !ok {
		fmt.Fprintf(os.Stderr, "faults: unknown profile %q: use short or long\n", *profile)
		return 1
	}
	env, err := testenv.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	cfg := faults.Config{Env: env, Profile: prof, RunSeed: *runSeed, Iterations: *iterations, ProviderDir: *providerDir, Terraform: *terraform,
		WorkDir: *work, ApplyTimeout: *applyTimeout, MaxApplies: *maxApplies, Log: os.Stderr}
	if *verbose {
		cfg.TerraformLog = os.Stderr
	}
	if *kind != "" {
		kinds, err := faults.ParseKinds(*kind)
		if err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			return 1
		}
		cfg.Only = kinds
	}
	if *seed != "" {
		s, err := strconv.ParseUint(*seed, 10, 64)
		if err != nil || len(cfg.Only) != 1 {
			fmt.Fprintln(os.Stderr, "faults: -seed needs a number and one -kind")
			return 1
		}
		p := faults.NewPlan(s, cfg.Only[0], prof.MinCount, prof.MaxCount)
		cfg.Replay = &p
	}
	start := time.Now()
	cfg.Deadline = start.Add(*budget)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runs, runErr := faults.Run(ctx, cfg)
	res := &faults.Results{Profile: prof.Name, Commit: *commit, Date: start.UTC(), Command: *command, RunSeed: *runSeed,
		Planned: cfg.Planned(), Seconds: time.Since(start).Seconds(), Runs: runs,
		Machine: fmt.Sprintf("%d CPUs, %s/%s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)}
	for _, it := range runs {
		if !it.OK {
			res.Problems++
		}
	}
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "faults:", runErr)
	}
	if len(runs) == 0 {
		return 1
	}
	if *resultsPath != "" {
		if err := res.WriteJSON(*resultsPath); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			return 1
		}
	}
	if *page != "" {
		if err := writePage(*published, res, *page); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			return 1
		}
	}
	t := res.Total()
	fmt.Fprintf(os.Stderr, "faults: %d iterations in %.0f s: lost %d, doubled %d, unexpected %d, left in staging %d, %d with a problem\n",
		len(runs), res.Seconds, t.Lost, t.Doubled, t.Unexpected, t.InStaging, res.Problems)
	if res.Problems > 0 || runErr != nil {
		return 3
	}
	return 0
}

// writePage writes the page of the published results in dir ("" for none) and res.
func writePage(dir string, res *faults.Results, page string) error {
	var runs []*faults.Results
	if dir != "" {
		var err error
		if runs, err = faults.ReadPublished(dir); err != nil {
			return err
		}
	}
	return publish(faults.Page{Runs: append(runs, res)}, page)
}

// rewritePage writes the page from a folder of published results, or from one results file.
func rewritePage(from, page string) error {
	if fi, err := os.Stat(from); err == nil && fi.IsDir() {
		runs, err := faults.ReadPublished(from)
		if err != nil {
			return err
		}
		return publish(faults.Page{Runs: runs}, page)
	}
	res, err := faults.ReadResults(from)
	if err != nil {
		return err
	}
	return publish(faults.Page{Runs: []*faults.Results{res}}, page)
}

// publish writes the page and names the published results it no longer shows.
func publish(p faults.Page, page string) error {
	if err := p.Write(page); err != nil {
		return err
	}
	for _, r := range p.Superseded() {
		if r.File != "" {
			fmt.Fprintf(os.Stderr, "faults: %s (commit %s, %s): a newer run measured all its kinds; the page no longer shows it (git rm it)\n",
				r.File, r.Commit, r.Date.UTC().Format(time.RFC3339))
		}
	}
	return nil
}
