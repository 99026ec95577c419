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

// migrateExample is the recipe our apply runs, as an operator would: the repository's own
// example, its empty provider blocks pointed at the benchmark's brokers. Step one
// (migrateInventory) writes the inventory the apply's configuration (migrateMain and
// migrateMove) declares and moves the queues of.
const (
	migrateExample   = "examples/migrate-broker"
	migrateInventory = "inventory/main.tf"
	migrateMain      = "main.tf"
	migrateMove      = "move.tf"
	// migrateInventoryFile is what step one writes, where step two's terraform reads it.
	migrateInventoryFile = "inventory.auto.tfvars.json"
)

// applyMigration migrates every queue named prefix* with step two of examples/migrate-broker in
// ws, the workspace migrationWorkspace wrote after step one: the one `terraform apply` that is
// timed (the target queues declared like the source's and each moved by an
// artemis_queue_transfer), terraform running parallel resources at once, the provider built by
// scripts/bench.sh. Its CPU time is terraform's and the provider's; its peak RSS the provider's.
func (m *migration) applyMigration(ctx context.Context, ws *harness.Workspace, prefix string, parallel int, timeout time.Duration) (ProcessRun, string, *ApplyPhases, error) {
	command := fmt.Sprintf("terraform apply -parallelism=%d of %s (brokers \"source\" and \"target\", queue_pattern = \"^%s\")",
		parallel, migrateExample, regexp.QuoteMeta(prefix))
	// Terraform's output, timed line by line, says where the apply's time went.
	clock := newOutputClock()
	ws.Log = clock
	defer func() { ws.Log = nil }()
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

// migrationWorkspace writes a working folder holding the recipe with the brokers filled in:
// step one in its inventory folder, with the variables that select the run's queues, applied
// here, and its inventory written where step two, the folder itself, reads it. It returns the
// folder and how long step one took.
func (m *migration) migrationWorkspace(ctx context.Context, prefix string, parallel int, timeout time.Duration) (*harness.Workspace, time.Duration, error) {
	files := map[string]string{}
	for _, name := range []string{migrateInventory, migrateMain, migrateMove} {
		raw, err := os.ReadFile(filepath.Join(m.mcfg.RepoDir, migrateExample, name))
		if err != nil {
			return nil, 0, fmt.Errorf("reading the recipe the apply runs: %w", err)
		}
		files[name] = string(raw)
	}
	for _, name := range []string{migrateInventory, migrateMain} {
		text, err := migrationMain(files[name], m.srcAccess, m.tgtAccess)
		if err != nil {
			return nil, 0, fmt.Errorf("%s/%s: %w", migrateExample, name, err)
		}
		files[name] = text
	}
	files[filepath.Join(filepath.Dir(migrateInventory), "terraform.tfvars")] =
		fmt.Sprintf("old_broker    = \"source\"\nqueue_pattern = %q\n", "^"+regexp.QuoteMeta(prefix))
	files["terraform.tfvars"] = "old_broker = \"source\"\nnew_broker = \"target\"\n"
	dir, err := os.MkdirTemp(m.mcfg.WorkDir, "migrate-")
	if err != nil {
		return nil, 0, fmt.Errorf("a folder for terraform: %w", err)
	}
	fail := func(err error) (*harness.Workspace, time.Duration, error) {
		os.RemoveAll(dir)
		return nil, 0, err
	}
	if err := os.Mkdir(filepath.Join(dir, filepath.Dir(migrateInventory)), 0o700); err != nil {
		return fail(fmt.Errorf("a folder for the recipe's step one: %w", err))
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return fail(fmt.Errorf("writing the migration's %s: %w", name, err))
		}
	}
	cli, err := harness.WriteCLIConfig(dir, m.mcfg.ProviderDir)
	if err != nil {
		return fail(err)
	}
	started := time.Now()
	step1 := &harness.Workspace{Dir: filepath.Join(dir, filepath.Dir(migrateInventory)), CLIConfig: cli, Terraform: m.mcfg.TerraformPath}
	if _, err := m.runApply(ctx, step1, timeout, nil); err != nil {
		return fail(fmt.Errorf("step one, the inventory of the source's queues: %w", err))
	}
	inventory, err := step1.OutputJSON(ctx, "inventory")
	if err != nil {
		return fail(fmt.Errorf("step one, the inventory of the source's queues: %w", err))
	}
	if err := os.WriteFile(filepath.Join(dir, migrateInventoryFile), inventory, 0o600); err != nil {
		return fail(fmt.Errorf("writing the migration's %s: %w", migrateInventoryFile, err))
	}
	took := time.Since(started)
	m.logf("migration %s: step one wrote the inventory in %.1f s", MigrationApply, took.Seconds())
	// TF_CLI_ARGS_apply adds -parallelism to the apply the harness starts.
	return &harness.Workspace{Dir: dir, CLIConfig: cli, Terraform: m.mcfg.TerraformPath,
		Env: []string{fmt.Sprintf("TF_CLI_ARGS_apply=-parallelism=%d", parallel)}}, took, nil
}

// migrationMain is the example with its empty provider block replaced by one holding the
// brokers "source" and "target", and the provider's source named for dev_overrides.
func migrationMain(example string, source, target BrokerAccess) (string, error) {
	const empty = `provider "artemis" {}`
	if !strings.Contains(example, empty) {
		return "", fmt.Errorf("no %s block to point at the benchmark's brokers", empty)
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
