package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// Config is one benchmark run.
type Config struct {
	Profile Profile
	Env     *testenv.Env
	// RelayUser is the user our relay runs as: "transfer" (least privilege, the default) or
	// "admin". artemis transfer and artemis perf always run as admin: they consume any queue.
	RelayUser   string
	RelayTuning RelayTuning
	// TunedCommit is the commit interval of the tuned artemis transfer variants.
	TunedCommit int
	// PerfProtocols are the protocols the raw limit is measured over (CORE, AMQP).
	PerfProtocols []string
	// Contenders, when not empty, limits the run to these contender ids (for development).
	Contenders []string
	// ProviderDir, when set, holds the built terraform-provider-artemis: the contender
	// "ours (terraform apply)" then runs the terraform at TerraformPath with it.
	ProviderDir, TerraformPath string
	// BaselineProviderDir, when set, holds the provider built from BaselineRev, an earlier
	// revision: it adds the contender ours-apply-baseline on the goal case.
	BaselineProviderDir, BaselineRev string
	// Brokers says how the environment's brokers were created, for the report.
	Brokers string
	// SampleFrom is the least case size whose moves are sampled (Trial.Samples); 0: sampleFrom.
	SampleFrom int
	// WorkDir holds the perf reports; RepoDir is the checkout (for the commit).
	WorkDir, RepoDir string
	Log              io.Writer
}

// bench is one run in progress.
type bench struct {
	cfg                  Config
	res                  *Results
	srcAdmin, tgtAdmin   *artemis.Client
	srcAccess, tgtAccess BrokerAccess
	srcURLs, tgtURLs     BrokerURLs
	cli                  ArtemisCLI
	contenders           []Contender
	sourcePID, targetPID int
	seq                  int
	started              time.Time
	// ledger is the copy contender's ledger database: one per benchmark run, so that no run of
	// an earlier benchmark (or of a test) shares its tables, dropped at the end; nil when no
	// copy runs.
	ledger *testenv.Database
}

// Run measures every case of the profile and returns the results. A run stopped early (ctx, or
// an error of the environment) returns what it measured so far, with Complete false, and the
// error.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	b := &bench{cfg: cfg, started: time.Now(), res: &Results{Profile: cfg.Profile, Started: time.Now().UTC(), RelayUser: cfg.RelayUser,
		RelayTuning: cfg.RelayTuning, CommandLines: map[string]string{}, Brokers: cfg.Brokers}}
	start := time.Now()
	err := b.run(ctx)
	if b.ledger != nil {
		if derr := b.ledger.Drop(ctx); derr != nil {
			b.logf("%v", derr)
		}
	}
	b.res.Seconds = time.Since(start).Seconds()
	b.res.Machine.LoadAtEnd = LoadAverage()
	for i := range b.res.Cases {
		finishCase(&b.res.Cases[i], b.contenders)
	}
	b.res.Targets = append(evaluateTargets(b.res.Cases), syncedTargets(b.res)...)
	if err != nil {
		b.res.Error = err.Error()
		return b.res, err
	}
	b.res.Complete = true
	return b.res, nil
}

func (b *bench) logf(format string, args ...any) {
	elapsed := time.Since(b.started).Round(time.Second)
	fmt.Fprintf(b.cfg.Log, "bench [%s]: "+format+"\n", append([]any{elapsed}, args...)...)
}

func (b *bench) run(ctx context.Context) error {
	if err := b.setUp(ctx); err != nil {
		return err
	}
	if n := b.cfg.Profile.WarmupCount; n > 0 {
		b.warmUp(ctx, n)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, size := range b.cfg.Profile.MessageSizes() {
		for _, proto := range b.cfg.PerfProtocols {
			l := b.measureLimit(ctx, size, proto)
			b.res.Limits = append(b.res.Limits, l)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	for _, c := range b.cfg.Profile.Cases {
		cr := CaseResult{Case: c, Name: c.Name()}
		cr.Limit, cr.LimitVia = bestLimit(b.res.Limits, c.Size)
		b.res.Cases = append(b.res.Cases, cr)
		cur := &b.res.Cases[len(b.res.Cases)-1]
		// Repetitions outside, contenders inside, in an order rotated each repetition: drift of
		// a shared machine, and whatever one run leaves the brokers doing, spread over all.
		for rep := 1; rep <= b.cfg.Profile.RepsOf(c); rep++ {
			for i := range b.contenders {
				ct := b.contenders[(i+rep-1)%len(b.contenders)]
				if !c.Runs(ct.ID) {
					continue
				}
				var pre *CaseResult
				if rep == 1 && ct.ID == ContenderOurs {
					pre = cur // the first filled source queue of the case also serves the preflight
				}
				run := b.runOnce(ctx, c, ct, rep, pre)
				cur.Runs = append(cur.Runs, run)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
		finishCase(cur, b.contenders)
		b.logCase(cur)
	}
	for _, c := range b.cfg.Profile.MemoryCases {
		ours := -1
		for i, ct := range b.contenders {
			if ct.ID == ContenderOurs {
				ours = i
			}
		}
		if ours < 0 {
			break // our relay is not among the selected contenders
		}
		b.logf("%s: our relay alone, once (peak memory and preflight at this size)", c.Name())
		cr := CaseResult{Case: c, Name: c.Name(), OursOnly: true}
		cr.Limit, cr.LimitVia = bestLimit(b.res.Limits, c.Size)
		b.res.Cases = append(b.res.Cases, cr)
		cur := &b.res.Cases[len(b.res.Cases)-1]
		cur.Runs = append(cur.Runs, b.runOnce(ctx, c, b.contenders[ours], 1, cur))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		finishCase(cur, b.contenders)
		b.logCase(cur)
	}
	if n := b.cfg.Profile.BreakdownCount; n > 0 {
		b.logf("where the brokers' CPU goes: the parts of a move of %d x 1 KiB, each on its own", n)
		b.res.Breakdown = b.measureBreakdown(ctx, n)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if n := b.cfg.Profile.DepthCount; n > 0 {
		b.logf("the target's store as its queue deepens: %d x 1 KiB, with and without duplicate ids", n)
		idle := 0.0
		if b.res.Breakdown != nil {
			idle = b.res.Breakdown.IdleTargetPerSec
		}
		b.res.Depth = b.measureDepth(ctx, n, idle)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if len(b.cfg.Profile.ScaleCases) > 0 {
		if err := b.measureScale(ctx); err != nil {
			return err
		}
	}
	if n := b.cfg.Profile.ResumeCount; n > 0 {
		b.logf("resume: %d x 1 KiB, our relay killed mid-relay and resumed, %s", n, plural(b.cfg.Profile.Reps, "time"))
		b.res.Resume = b.measureResume(ctx, n)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// setUp builds the clients and reads versions, the CLI's defaults and the brokers' pids.
func (b *bench) setUp(ctx context.Context) error {
	env := b.cfg.Env
	src, ok1 := env.Brokers["source"]
	tgt, ok2 := env.Brokers["target"]
	if !ok1 || !ok2 {
		return errors.New("the test environment has no source and target broker")
	}
	admin := func(br testenv.Broker) BrokerAccess {
		return BrokerAccess{Name: br.Name, AMQPURL: br.AMQPURL, ManagementURL: br.ManagementURL, Username: env.AdminUser, Password: env.AdminPassword}
	}
	b.srcAccess, b.tgtAccess = admin(src), admin(tgt)
	var err error
	if b.srcAdmin, err = b.srcAccess.client(); err != nil {
		return err
	}
	if b.tgtAdmin, err = b.tgtAccess.client(); err != nil {
		return err
	}
	if b.cfg.RelayUser != "admin" {
		b.srcAccess.Username, b.srcAccess.Password = env.TransferUser, env.TransferPassword
		b.tgtAccess.Username, b.tgtAccess.Password = env.TransferUser, env.TransferPassword
		b.res.RelayUser = "transfer"
	}
	b.srcURLs = BrokerURLs{Core: src.CoreURL, AMQP: src.AMQPURL}
	b.tgtURLs = BrokerURLs{Core: tgt.CoreURL, AMQP: tgt.AMQPURL}
	b.cli = ArtemisCLI{Home: env.ArtemisHome, User: env.AdminUser, Password: env.AdminPassword, Log: io.Discard}

	b.res.Machine = ReadMachine(ctx, b.cfg.RepoDir)
	info, err := b.srcAdmin.BrokerInfo(ctx)
	if err != nil {
		return fmt.Errorf("reading the source broker's version: %w", err)
	}
	b.res.Machine.Artemis = info.Version
	if b.res.TransferDefaultCommit, err = b.cli.TransferDefaultCommit(ctx); err != nil {
		return err
	}
	all := Contenders(b.res.TransferDefaultCommit, b.cfg.TunedCommit)
	for _, c := range all {
		if len(b.cfg.Contenders) == 0 || contains(b.cfg.Contenders, c.ID) {
			b.contenders = append(b.contenders, c)
		}
	}
	if b.cfg.ProviderDir != "" && (len(b.cfg.Contenders) == 0 || contains(b.cfg.Contenders, ContenderApply)) {
		b.contenders = append(b.contenders, Contender{ID: ContenderApply, Label: "ours (terraform apply)", Tool: ToolTerraform})
	}
	if b.cfg.BaselineProviderDir != "" && (len(b.cfg.Contenders) == 0 || contains(b.cfg.Contenders, ContenderApplyBase)) {
		b.contenders = append(b.contenders, Contender{ID: ContenderApplyBase, Label: "ours (terraform apply) at " + b.cfg.BaselineRev,
			Tool: ToolTerraform, ProviderDir: b.cfg.BaselineProviderDir})
		b.res.BaselineRev = b.cfg.BaselineRev
	}
	if len(b.contenders) == 0 {
		return fmt.Errorf("no contender left after selecting %v", b.cfg.Contenders)
	}
	b.res.Contenders = b.contenders
	for _, c := range b.contenders {
		if c.Copy && b.ledger == nil {
			if env.PostgresDSN == "" {
				return errors.New("the copy contender needs a ledger, and the test environment has no postgres_dsn")
			}
			if b.ledger, err = testenv.CreateDatabase(ctx, env.PostgresDSN, "bench"); err != nil {
				return fmt.Errorf("the copy contender's ledger: %w", err)
			}
		}
	}
	if b.sourcePID, err = brokerPID(env.StateDir, "source"); err != nil {
		return err
	}
	if b.targetPID, err = brokerPID(env.StateDir, "target"); err != nil {
		return err
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// logCase prints a case's medians.
func (b *bench) logCase(cr *CaseResult) {
	for _, s := range cr.Summary {
		b.logf("%s %-22s median %8.0f msg/s (%d/%d correct)", cr.Name, s.Contender, s.MsgsPerSec, s.OKRuns, s.Runs)
	}
	b.logf("%s: ours vs transfer default %.2fx, vs best transfer %.2fx, vs limit %.0f%%", cr.Name,
		cr.Ratios.VsTransferDefault, cr.Ratios.VsBestTransfer, 100*cr.Ratios.VsLimit)
	if cr.Ratios.CopyVsMove > 0 {
		b.logf("%s: copy vs move %.0f%%", cr.Name, 100*cr.Ratios.CopyVsMove)
	}
}
