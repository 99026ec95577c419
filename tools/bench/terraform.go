package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// apply moves spec with a whole `terraform apply` in a fresh working folder, with the provider
// that scripts/bench.sh built (dev_overrides: nothing is downloaded). Its CPU time is
// terraform's and the provider's (a parent's rusage counts the children it waited for); its
// peak RSS is the provider's, polled from /proc while the apply runs. The provider is ct's own
// when it names one (an earlier revision's).
func (b *bench) apply(ctx context.Context, spec transfer.Spec, ct Contender, timeout time.Duration) (ProcessRun, error) {
	providerDir := b.cfg.ProviderDir
	if ct.ProviderDir != "" {
		providerDir = ct.ProviderDir
	}
	ws, err := b.workspace(spec, providerDir, timeout)
	if err != nil {
		return ProcessRun{}, err
	}
	defer os.RemoveAll(ws.Dir)
	return b.runApply(ctx, ws, timeout, nil)
}

// workspace writes a working folder for `terraform apply` of spec: the relay's brokers and
// users, and the run's tuning, run with the provider in providerDir.
func (b *bench) workspace(spec transfer.Spec, providerDir string, timeout time.Duration) (*harness.Workspace, error) {
	dir, err := os.MkdirTemp(b.cfg.WorkDir, "apply-")
	if err != nil {
		return nil, fmt.Errorf("a folder for terraform: %w", err)
	}
	key := func(a BrokerAccess) harness.BrokerKey {
		return harness.BrokerKey{AMQPURLs: []string{a.AMQPURL}, ManagementURL: a.ManagementURL, Username: a.Username, Password: a.Password}
	}
	tuning := b.cfg.RelayTuning
	config := harness.TransferConfig{Resource: "bench", Source: key(b.srcAccess), Target: key(b.tgtAccess),
		SourceQueue: spec.Source.Queue, TargetQueue: spec.Target.Queue, Create: timeout,
		BatchSize: tuning.BatchSize, ChunkSize: tuning.ChunkSize, MaxInFlightBytes: tuning.MaxInFlightBytes}
	if err := harness.WriteWorkspace(dir, config); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cli, err := harness.WriteCLIConfig(dir, providerDir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &harness.Workspace{Dir: dir, CLIConfig: cli, Terraform: b.cfg.TerraformPath}, nil
}

// applyOutputTail is how much of an apply's output a ProcessRun keeps.
const applyOutputTail = 8192

// runApply runs `terraform apply` in ws. While it runs, watch (when not nil) is called with
// the time the apply started, a function that returns the provider's pid (0 while there is
// none: terraform starts a provider for the plan and another for the apply) and a channel
// closed when the apply has ended; the apply's result is returned when both have ended.
func (b *bench) runApply(ctx context.Context, ws *harness.Workspace, timeout time.Duration, watch func(start time.Time, provider func() int, ended <-chan struct{})) (ProcessRun, error) {
	// The provider is terraform's child: a timeout kills the whole group.
	a, err := ws.StartApply(ctx, timeout+time.Minute)
	if err != nil {
		return ProcessRun{}, err
	}
	peak := watchPeakRSS(a.ProviderPID)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if watch != nil {
			watch(a.Started(), a.ProviderPID, a.Done())
		}
	}()
	err = a.Wait()
	pr := processRun(a.State(), a.Wall(), harness.Tail(a.Output(), applyOutputTail))
	var at MemoryAtPeak
	pr.PeakRSSKiB, at = peak()
	if at.RSSKiB > 0 {
		pr.Memory = &at
	}
	<-watched
	if err != nil {
		return pr, fmt.Errorf("terraform apply: %w: %s", err, harness.LastLines(pr.OutputTail, 8))
	}
	return pr, nil
}
