package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// providerAddress is the provider's registry address (the provider's main serves it under the same).
const providerAddress = "registry.terraform.io/artemis-studio/artemis"

// terraformCLI runs the Terraform CLI of TF_ACC_TERRAFORM_PATH in a folder of its own against a
// provider served by the test process, as the acceptance tests' framework does, for
// configurations that framework cannot check: its state checks reject resources with for_each.
// The provider being in the test process, its runHooks and canaryProbed reach the test.
type terraformCLI struct {
	dir, bin string
	env      []string
}

func newTerraformCLI(t *testing.T, p *artemisProvider) *terraformCLI {
	t.Helper()
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if os.Getenv("TF_ACC") == "" || bin == "" {
		t.Skip("acceptance tests need TF_ACC=1 and TF_ACC_TERRAFORM_PATH")
	}
	ctx, cancel := context.WithCancel(context.Background())
	reattach, closed := make(chan *plugin.ReattachConfig, 1), make(chan struct{})
	go func() {
		_ = tf6server.Serve(providerAddress, providerserver.NewProtocol6(p), tf6server.WithDebug(ctx, reattach, closed),
			tf6server.WithGoPluginLogger(hclog.NewNullLogger()), tf6server.WithoutLogStderrOverride(), tf6server.WithoutLogLocation())
	}()
	var cfg *plugin.ReattachConfig
	select {
	case cfg = <-reattach:
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("the provider server did not start")
	}
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	value, err := json.Marshal(map[string]any{providerAddress: map[string]any{
		"Protocol": string(cfg.Protocol), "ProtocolVersion": 6, "Pid": cfg.Pid, "Test": true,
		"Addr": map[string]string{"Network": cfg.Addr.Network(), "String": cfg.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cliConfig := filepath.Join(dir, "cli.tfrc") // no user configuration, nothing downloaded
	if err := os.WriteFile(cliConfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tf := &terraformCLI{dir: filepath.Join(dir, "config"), bin: bin,
		env: append(os.Environ(), "TF_REATTACH_PROVIDERS="+string(value), "TF_CLI_CONFIG_FILE="+cliConfig,
			"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")}
	if err := os.Mkdir(tf.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tf.write(t, "versions.tf", `terraform {
  required_providers {
    artemis = { source = "`+providerAddress+`" }
  }
}
`)
	return tf
}

func (tf *terraformCLI) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(tf.dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// run runs a terraform command (-no-color added) and fails the test on an error, with the
// command's output.
func (tf *terraformCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	all := append([]string{args[0], "-no-color"}, args[1:]...)
	cmd := exec.CommandContext(ctx, tf.bin, all...)
	cmd.Dir, cmd.Env = tf.dir, tf.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("terraform %s: %v\n%s", args[0], err, out.String())
	}
	return out.String()
}

// stateValue returns an attribute of a resource instance (address as Terraform writes it,
// such as x.y["k"]) from `terraform show -json`, as text.
func (tf *terraformCLI) stateValue(t *testing.T, address, attribute string) string {
	t.Helper()
	var state struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(tf.run(t, "show", "-json")), &state); err != nil {
		t.Fatalf("terraform show -json: %v", err)
	}
	for _, r := range state.Values.RootModule.Resources {
		if r.Address == address {
			v, _ := json.Marshal(r.Values[attribute])
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
			return string(v)
		}
	}
	t.Fatalf("%s is not in state", address)
	return ""
}
