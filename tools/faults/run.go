package faults

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// Config is one harness run.
type Config struct {
	Env     *testenv.Env
	Profile Profile
	// RunSeed draws the iterations' seeds (Schedule). Replay, when not nil, runs only that one
	// iteration instead.
	RunSeed uint64
	Replay  *Plan
	// Only, with a profile: the kinds to run, in turn (nil: every kind). Iterations, when not
	// 0, replaces the profile's number of iterations.
	Only       []Kind
	Iterations int
	// ProviderDir holds the built terraform-provider-artemis; Terraform is the CLI to run.
	ProviderDir, Terraform string
	WorkDir                string // per-iteration terraform folders
	// ApplyTimeout bounds one apply (also its timeouts.create); MaxApplies the applies of one
	// iteration, the first included; Deadline the whole run (iterations not begun by then are
	// left out, and the results say so).
	ApplyTimeout time.Duration
	MaxApplies   int
	Deadline     time.Time
	Log          io.Writer
	// TerraformLog, when not nil, receives terraform's output.
	TerraformLog io.Writer
}

// Iteration is what one iteration did and found.
type Iteration struct {
	Plan
	Index       int    `json:"index"`
	SourceQueue string `json:"source_queue"`
	TargetQueue string `json:"target_queue"`
	// Injected says the fault landed while the first apply ran; InjectedAt is when, in seconds
	// after it started, and at how many messages on the target.
	Injected       bool    `json:"injected"`
	InjectedAt     float64 `json:"injected_at_s"`
	InjectedTarget int64   `json:"injected_at_target"`
	// ReferenceSeconds, for the kinds that land anytime, is how long the clean reference apply
	// took: the fault's instant is drawn over it.
	ReferenceSeconds float64 `json:"reference_s,omitempty"`
	Applies          int     `json:"applies"`
	Recovered        bool    `json:"recovered"`
	// RecoverySeconds is from the fault to the end of the first successful apply.
	RecoverySeconds float64 `json:"recovery_s"`
	Counts
	StagingQueuesLeft int      `json:"staging_queues_left"`
	Notes             []string `json:"notes,omitempty"`
	OK                bool     `json:"ok"`
	Problem           string   `json:"problem,omitempty"`
	Seconds           float64  `json:"seconds"`
}

// runner is a run in progress.
type runner struct {
	cfg     Config
	cli     string // TF_CLI_CONFIG_FILE
	admin   map[string]*artemis.Client
	proxies map[string]*testenv.Proxy
	holder  string // the source queue the management-lock holder moves back and forth
	started time.Time
	// ledger is the database the run's copies record in, created for the run on the
	// environment's PostgreSQL when a copy kind is planned (so that a run's copies never meet
	// another run's rows), and dropped at the end.
	ledger *testenv.Database
}

// The brokers the harness uses.
const (
	brSource = "source"
	brTarget = "target"
	brNode1  = "node1"
	brNode2  = "node2"
)

// Planned is the number of iterations the run is to make.
func (c Config) Planned() int {
	switch {
	case c.Replay != nil:
		return 1
	case c.Iterations > 0:
		return c.Iterations
	}
	return c.Profile.Iterations(c.Only)
}

// Run runs the iterations and returns their results. It stops at the deadline or when ctx
// ends, returning what ran.
func Run(ctx context.Context, cfg Config) ([]Iteration, error) {
	if err := cfg.Env.Owned(); err != nil {
		return nil, fmt.Errorf("the fault harness kills and restarts brokers: %w", err)
	}
	h := &runner{cfg: cfg, admin: map[string]*artemis.Client{}, proxies: map[string]*testenv.Proxy{}, started: time.Now()}
	defer h.close()
	plans := []Plan{}
	if cfg.Replay != nil {
		plans = append(plans, *cfg.Replay)
	} else {
		plans = Schedule(cfg.RunSeed, cfg.Planned(), cfg.Only)
	}
	if err := h.setUp(ctx, plans); err != nil {
		return nil, err
	}
	for _, p := range plans {
		if p.Kind == ManagementBusy {
			// Filled before the first apply, so that its fill does not compete with one.
			setupCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			err := h.lockHolder(setupCtx)
			cancel()
			if err != nil {
				return nil, err
			}
			break
		}
	}
	var out []Iteration
	for i, p := range plans {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		if !cfg.Deadline.IsZero() && time.Now().After(cfg.Deadline) {
			h.logf("deadline reached: %d of %d iterations ran", len(out), len(plans))
			return out, nil
		}
		plan := NewPlan(p.Seed, p.Kind, cfg.Profile.MinCount, cfg.Profile.MaxCount)
		if cfg.Replay != nil {
			plan = *cfg.Replay
		}
		it := h.iteration(ctx, i+1, len(plans), plan)
		out = append(out, it)
		status := "ok"
		if !it.OK {
			status = "FAILED: " + it.Problem
		}
		if plan.Kind.Copies() {
			h.logf("iteration %d/%d seed=%d kind=%s (copy): %d messages, lost %d, doubled %d, unexpected %d, source changed %d, staging queues %d, %d applies, recovery %.1f s, %.0f s: %s",
				i+1, len(plans), plan.Seed, plan.Kind, plan.Count, it.Lost, it.Doubled, it.Unexpected, it.SourceChanged, it.StagingQueuesLeft,
				it.Applies, it.RecoverySeconds, it.Seconds, status)
			continue
		}
		h.logf("iteration %d/%d seed=%d kind=%s: %d messages, lost %d, doubled %d, unexpected %d, in staging %d, left on source %d, %d applies, recovery %.1f s, %.0f s: %s",
			i+1, len(plans), plan.Seed, plan.Kind, plan.Count, it.Lost, it.Doubled, it.Unexpected, it.InStaging, it.LeftSource,
			it.Applies, it.RecoverySeconds, it.Seconds, status)
	}
	return out, nil
}

func (h *runner) logf(format string, args ...any) {
	fmt.Fprintf(h.cfg.Log, "faults [%s]: "+format+"\n", append([]any{time.Since(h.started).Round(time.Second)}, args...)...)
}

func (h *runner) setUp(ctx context.Context, plans []Plan) error {
	env := h.cfg.Env
	if slices.ContainsFunc(plans, func(p Plan) bool { return p.Kind.Copies() }) {
		if env.PostgresDSN == "" {
			return fmt.Errorf("the copy fault kinds need the test environment's PostgreSQL, and %s has no postgres_dsn", testenv.FilePath())
		}
		dbCtx, cancel := context.WithTimeout(ctx, time.Minute)
		db, err := testenv.CreateDatabase(dbCtx, env.PostgresDSN, "faults")
		cancel()
		if err != nil {
			return fmt.Errorf("the copies' ledger: %w", err)
		}
		h.ledger = db
		h.logf("copies record in ledger database %s", db.Name)
	}
	for _, name := range []string{brSource, brTarget, brNode1, brNode2} {
		b, ok := env.Brokers[name]
		if !ok {
			if name == brNode1 || name == brNode2 {
				continue // no cluster: the failover kind is refused when it comes
			}
			return fmt.Errorf("the test environment has no %s broker", name)
		}
		c, err := artemis.New(artemis.Config{Name: name, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
			Username: env.AdminUser, Password: env.AdminPassword, RequestTimeout: 70 * time.Second})
		if err != nil {
			return fmt.Errorf("admin client for %s: %w", name, err)
		}
		h.admin[name] = c
	}
	for _, name := range []string{brSource, brTarget} {
		u, err := url.Parse(env.Brokers[name].AMQPURL)
		if err != nil {
			return fmt.Errorf("the %s broker's AMQP URL: %w", name, err)
		}
		p, err := testenv.StartProxy(u.Host)
		if err != nil {
			return err
		}
		h.proxies[name] = p
	}
	if err := os.MkdirAll(h.cfg.WorkDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", h.cfg.WorkDir, err)
	}
	cli, err := harness.WriteCLIConfig(h.cfg.WorkDir, h.cfg.ProviderDir)
	if err != nil {
		return err
	}
	h.cli = cli
	return nil
}

func (h *runner) close() {
	for _, p := range h.proxies {
		p.Close()
	}
	if h.ledger != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.ledger.Drop(ctx); err != nil {
			h.logf("%v", err)
		}
	}
	if h.holder != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, q := range []string{h.holder, h.holder + ".b"} {
			_ = h.admin[brSource].DestroyQueue(ctx, q)
		}
	}
}
