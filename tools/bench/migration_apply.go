package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// migrateExample is the configuration our apply runs, as an operator would: the repository's
// own example, its empty provider block pointed at the benchmark's brokers.
const migrateExample = "examples/migrate-broker/main.tf"

// applyMigration migrates every queue named prefix* with one `terraform apply` of
// examples/migrate-broker (the target queues declared like the source's and each moved by an
// artemis_queue_transfer), terraform running parallel resources at once, the provider built by
// scripts/bench.sh. Its CPU time is terraform's and the provider's; its peak RSS the provider's.
func (m *migration) applyMigration(ctx context.Context, prefix string, parallel int, timeout time.Duration) (ProcessRun, string, *ApplyPhases, error) {
	ws, err := m.migrationWorkspace(prefix, parallel)
	if err != nil {
		return ProcessRun{}, "", nil, err
	}
	defer os.RemoveAll(ws.Dir)
	command := fmt.Sprintf("terraform apply -parallelism=%d of %s (brokers \"source\" and \"target\", queue_pattern = \"^%s\")",
		parallel, migrateExample, regexp.QuoteMeta(prefix))
	// Terraform's output, timed line by line, says where the apply's time went.
	clock := newOutputClock()
	ws.Log = clock
	var providers providerCPU
	pr, err := m.runApply(ctx, ws, timeout, providers.watch)
	phases := clock.Phases()
	if phases != nil {
		phases.ProviderCPU = providers.total().Seconds()
	}
	return pr, command, phases, err
}

// providerCPU follows the CPU time of each provider process terraform starts (one for the
// plan, one for the apply), so that the apply's client CPU splits into terraform's and the
// provider's.
type providerCPU struct {
	mu   sync.Mutex
	last map[int]time.Duration
}

// watch polls the provider's CPU time every 200 ms until the apply ends; a provider's last
// 200 ms before it exits are missed.
func (p *providerCPU) watch(_ time.Time, provider func() int, ended <-chan struct{}) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		if pid := provider(); pid > 0 {
			if cpu, err := ProcessCPU(pid); err == nil {
				p.mu.Lock()
				if p.last == nil {
					p.last = map[int]time.Duration{}
				}
				p.last[pid] = cpu
				p.mu.Unlock()
			}
		}
		select {
		case <-ended:
			return
		case <-t.C:
		}
	}
}

func (p *providerCPU) total() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum time.Duration
	for _, cpu := range p.last {
		sum += cpu
	}
	return sum
}

// migrationWorkspace writes a working folder holding the example with the brokers filled in
// and the variables that select the run's queues.
func (m *migration) migrationWorkspace(prefix string, parallel int) (*harness.Workspace, error) {
	raw, err := os.ReadFile(filepath.Join(m.mcfg.RepoDir, migrateExample))
	if err != nil {
		return nil, fmt.Errorf("reading the example the apply runs: %w", err)
	}
	mainTF, err := migrationMain(string(raw), m.srcAccess, m.tgtAccess)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(m.mcfg.WorkDir, "migrate-")
	if err != nil {
		return nil, fmt.Errorf("a folder for terraform: %w", err)
	}
	vars := fmt.Sprintf("old_broker    = \"source\"\nnew_broker    = \"target\"\nqueue_pattern = %q\n", "^"+regexp.QuoteMeta(prefix))
	for name, text := range map[string]string{"main.tf": mainTF, "terraform.tfvars": vars} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("writing the migration's %s: %w", name, err)
		}
	}
	cli, err := harness.WriteCLIConfig(dir, m.mcfg.ProviderDir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// TF_CLI_ARGS_apply adds -parallelism to the apply the harness starts.
	return &harness.Workspace{Dir: dir, CLIConfig: cli, Terraform: m.mcfg.TerraformPath,
		Env: []string{fmt.Sprintf("TF_CLI_ARGS_apply=-parallelism=%d", parallel)}}, nil
}

// migrationMain is the example with its empty provider block replaced by one holding the
// brokers "source" and "target", and the provider's source named for dev_overrides.
func migrationMain(example string, source, target BrokerAccess) (string, error) {
	const empty = `provider "artemis" {}`
	if !strings.Contains(example, empty) {
		return "", fmt.Errorf("%s has no %s block to point at the benchmark's brokers", migrateExample, empty)
	}
	var b strings.Builder
	b.WriteString("terraform {\n  required_providers {\n    artemis = { source = \"artemis-studio/artemis\" }\n  }\n}\n\n")
	b.WriteString("provider \"artemis\" {\n  brokers = {\n")
	for _, k := range []struct {
		name string
		a    BrokerAccess
	}{{"source", source}, {"target", target}} {
		fmt.Fprintf(&b, "    %s = {\n      amqp_urls      = [%q]\n      management_url = %q\n      username       = %q\n      password       = %q\n    }\n",
			k.name, k.a.AMQPURL, k.a.ManagementURL, k.a.Username, k.a.Password)
	}
	b.WriteString("  }\n}")
	return strings.Replace(example, empty, b.String(), 1), nil
}
