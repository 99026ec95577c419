package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProviderAddress is the provider's registry address, as dev_overrides names it.
const ProviderAddress = "registry.terraform.io/artemis-studio/artemis"

// ProviderExecutable is the name of the provider's executable, which terraform starts.
const ProviderExecutable = "terraform-provider-artemis"

// WriteCLIConfig writes, as dir/terraformrc, a CLI configuration whose dev_overrides point at
// pluginDir, the folder holding the built terraform-provider-artemis (nothing is downloaded),
// and returns its path (TF_CLI_CONFIG_FILE).
func WriteCLIConfig(dir, pluginDir string) (string, error) {
	path := filepath.Join(dir, "terraformrc")
	text := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", ProviderAddress, pluginDir)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("writing the terraform CLI configuration: %w", err)
	}
	return path, nil
}

// BrokerKey is one entry of the provider's brokers map.
type BrokerKey struct {
	AMQPURLs      []string
	ManagementURL string
	Username      string
	Password      string
}

// TransferConfig is a workspace's main.tf: the provider with the brokers "source" and
// "target", and one artemis_queue_transfer of the whole source queue.
type TransferConfig struct {
	// Resource is the transfer's resource name (artemis_queue_transfer.<Resource>).
	Resource                 string
	Source, Target           BrokerKey
	SourceQueue, TargetQueue string
	Create                   time.Duration // timeouts.create
	// LedgerDSN, when set, makes the transfer a copy (mode = "copy") that records in this
	// ledger (the provider's ledger_dsn); a move has no ledger.
	LedgerDSN string
	// BatchSize, ChunkSize and MaxInFlightBytes are set in the resource when above 0; 0
	// leaves the provider's default.
	BatchSize, ChunkSize int
	MaxInFlightBytes     int64
	// ReturnRunID, when set, makes the configuration an artemis_transfer_return of that run
	// on the source broker (named Resource) instead of the transfer.
	ReturnRunID string
}

// String is the configuration's main.tf.
func (c TransferConfig) String() string {
	var b strings.Builder
	b.WriteString("terraform {\n  required_providers {\n    artemis = { source = \"artemis-studio/artemis\" }\n  }\n}\n\n")
	b.WriteString("provider \"artemis\" {\n")
	if c.LedgerDSN != "" {
		fmt.Fprintf(&b, "  ledger_dsn = %q\n", c.LedgerDSN)
	}
	b.WriteString("  brokers = {\n")
	for _, k := range []struct {
		name string
		key  BrokerKey
	}{{"source", c.Source}, {"target", c.Target}} {
		urls := make([]string, len(k.key.AMQPURLs))
		for i, u := range k.key.AMQPURLs {
			urls[i] = strconv.Quote(u)
		}
		fmt.Fprintf(&b, "    %s = {\n      amqp_urls      = [%s]\n      management_url = %q\n      username       = %q\n      password       = %q\n    }\n",
			k.name, strings.Join(urls, ", "), k.key.ManagementURL, k.key.Username, k.key.Password)
	}
	b.WriteString("  }\n}\n\n")
	if c.ReturnRunID != "" {
		fmt.Fprintf(&b, "resource \"artemis_transfer_return\" %q {\n  broker = \"source\"\n  run_id = %q\n}\n", c.Resource, c.ReturnRunID)
		return b.String()
	}
	fmt.Fprintf(&b, "resource \"artemis_queue_transfer\" %q {\n", c.Resource)
	if c.LedgerDSN != "" {
		b.WriteString("  mode   = \"copy\"\n")
	}
	fmt.Fprintf(&b, "  source = { broker = \"source\", queue = %q }\n  target = { broker = \"target\", queue = %q }\n  timeouts = { create = %q }\n",
		c.SourceQueue, c.TargetQueue, c.Create.String())
	for _, opt := range []struct {
		name  string
		value int64
	}{{"batch_size", int64(c.BatchSize)}, {"staging_chunk_size", int64(c.ChunkSize)}, {"max_in_flight_bytes", c.MaxInFlightBytes}} {
		if opt.value > 0 {
			fmt.Fprintf(&b, "  %s = %d\n", opt.name, opt.value)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// Workspace is a terraform working directory: its own configuration and local state, run
// with the provider binary the CLI configuration points at.
type Workspace struct {
	Dir       string
	CLIConfig string // TF_CLI_CONFIG_FILE
	Terraform string // the terraform executable
	// Env is added to this process's environment for every apply (e.g. TF_LOG).
	Env []string
	// Log, when not nil, also receives terraform's output.
	Log     io.Writer
	applies int // applies started, which number their logs
	plans   int // plans run, which number their logs
}

// WriteWorkspace makes dir a fresh workspace folder (removing what it held) with config as
// its main.tf.
func WriteWorkspace(dir string, config TransferConfig) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config.String()), 0o600); err != nil {
		return fmt.Errorf("writing the workspace's configuration: %w", err)
	}
	return nil
}
