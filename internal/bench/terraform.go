package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// applyConfig is the configuration `terraform apply` runs: the provider with the relay's
// brokers and users, and one artemis_queue_transfer of the whole source queue.
var applyConfig = template.Must(template.New("main.tf").Funcs(template.FuncMap{"q": strconv.Quote}).Parse(`terraform {
  required_providers {
    artemis = { source = "artemis-studio/artemis" }
  }
}

provider "artemis" {
  brokers = {
{{- range .Brokers}}
    {{.Name}} = {
      amqp_urls      = [{{q .AMQPURL}}]
      management_url = {{q .ManagementURL}}
      username       = {{q .Username}}
      password       = {{q .Password}}
    }
{{- end}}
  }
}

resource "artemis_queue_transfer" "bench" {
  source   = { broker = "source", queue = {{q .Spec.Source.Queue}} }
  target   = { broker = "target", queue = {{q .Spec.Target.Queue}} }
  timeouts = { create = {{q .Timeout}} }
{{- if .Tuning.BatchSize}}
  batch_size = {{.Tuning.BatchSize}}
{{- end}}
{{- if .Tuning.ChunkSize}}
  staging_chunk_size = {{.Tuning.ChunkSize}}
{{- end}}
{{- if .Tuning.MaxInFlightBytes}}
  max_in_flight_bytes = {{.Tuning.MaxInFlightBytes}}
{{- end}}
}
`))

// apply moves spec with a whole `terraform apply` in a fresh working folder, with the provider
// that scripts/bench.sh built (dev_overrides: nothing is downloaded). Its CPU time is
// terraform's and the provider's (a parent's rusage counts the children it waited for); its
// peak RSS is the provider's, polled from /proc while the apply runs.
func (b *bench) apply(ctx context.Context, spec transfer.Spec, timeout time.Duration) (ProcessRun, error) {
	dir, err := b.applyDir(spec, timeout)
	if err != nil {
		return ProcessRun{}, err
	}
	defer os.RemoveAll(dir)
	return b.runApply(ctx, dir, timeout, nil)
}

// applyDir writes a working folder for `terraform apply` of spec.
func (b *bench) applyDir(spec transfer.Spec, timeout time.Duration) (string, error) {
	dir, err := os.MkdirTemp(b.cfg.WorkDir, "apply-")
	if err != nil {
		return "", fmt.Errorf("a folder for terraform: %w", err)
	}
	var main strings.Builder
	err = applyConfig.Execute(&main, struct {
		Brokers []BrokerAccess
		Spec    transfer.Spec
		Timeout string
		Tuning  RelayTuning
	}{[]BrokerAccess{b.srcAccess, b.tgtAccess}, spec, timeout.String(), b.cfg.RelayTuning})
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("writing main.tf: %w", err)
	}
	rc := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n",
		"registry.terraform.io/artemis-studio/artemis", b.cfg.ProviderDir)
	for name, text := range map[string]string{"main.tf": main.String(), "terraformrc": rc} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return dir, nil
}

// runApply runs `terraform apply` in dir. While it runs, watch (when not nil) is called with
// the time the apply started, a function that returns the provider's pid (0 while there is
// none: terraform starts a provider for the plan and another for the apply) and a channel
// closed when the apply has ended; the apply's result is returned when both have ended.
func (b *bench) runApply(ctx context.Context, dir string, timeout time.Duration, watch func(start time.Time, provider func() int, ended <-chan struct{})) (ProcessRun, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, b.cfg.TerraformPath, "-chdir="+dir, "apply", "-input=false", "-auto-approve", "-no-color")
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+filepath.Join(dir, "terraformrc"), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	// The provider is terraform's child: a timeout kills the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out := &tailBuffer{max: 8192}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return ProcessRun{}, fmt.Errorf("starting terraform apply: %w", err)
	}
	provider := func() int { return childNamed(cmd.Process.Pid, "terraform-provider-artemis") }
	peak := watchPeakRSS(provider)
	watched, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		if watch != nil {
			watch(start, provider, ended)
		}
	}()
	err := cmd.Wait()
	close(ended)
	pr := processRun(cmd, time.Since(start), out.String())
	var at MemoryAtPeak
	pr.PeakRSSKiB, at = peak()
	if at.RSSKiB > 0 {
		pr.Memory = &at
	}
	<-watched
	if err != nil {
		return pr, fmt.Errorf("terraform apply: %w: %s", err, lastLines(pr.OutputTail, 8))
	}
	return pr, nil
}

// childNamed returns the pid of a child of parent whose command is name, or 0.
func childNamed(parent int, name string) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", parent))
	for _, path := range tasks {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(raw)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				continue
			}
			// The kernel keeps the first 15 bytes of a command's name.
			if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(comm)) == name[:min(15, len(name))] {
				return pid
			}
		}
	}
	return 0
}
