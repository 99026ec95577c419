package provider

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The workspace recorded for a run is the one the operator selected: TF_WORKSPACE first, then
// what `terraform workspace select` wrote for the working directory, then "default".
func TestTerraformWorkspace_IsTheSelectedOne(t *testing.T) {
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, ".terraform"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ".terraform", "environment"), []byte("prod"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "data", "environment"), []byte("staging\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inWork := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(work, name)) }
	nowhere := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(t.TempDir(), name)) }
	env := func(vars map[string]string) environment { return func(k string) string { return vars[k] } }

	for _, tc := range []struct {
		name     string
		getenv   environment
		readFile func(string) ([]byte, error)
		want     string
	}{
		{"TF_WORKSPACE overrides the selection", env(map[string]string{"TF_WORKSPACE": "ci"}), inWork, "ci"},
		{"the selection of the working directory", env(nil), inWork, "prod"},
		{"the selection under TF_DATA_DIR", env(map[string]string{"TF_DATA_DIR": "data"}), inWork, "staging"},
		{"no selection", env(nil), nowhere, "default"},
	} {
		if got := terraformWorkspace(tc.getenv, tc.readFile); got != tc.want {
			t.Errorf("%s: workspace %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Terraform itself keeps the selected workspace where terraformWorkspace reads it: the real CLI
// selects one in an empty working directory, and the provider's reading names it.
func TestTerraformWorkspace_ReadsWhatTheTerraformCLIRecords(t *testing.T) {
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("terraform"); err != nil {
			t.Skip("no terraform CLI on PATH or in TF_ACC_TERRAFORM_PATH")
		}
	}
	work := t.TempDir()
	cmd := exec.Command(bin, "workspace", "new", "prod")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_WORKSPACE=", "TF_DATA_DIR=", "TF_CLI_CONFIG_FILE=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform workspace new prod: %v\n%s", err, out)
	}
	inWork := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(work, name)) }
	if got := terraformWorkspace(func(string) string { return "" }, inWork); got != "prod" {
		t.Errorf("after `terraform workspace new prod` the workspace reads %q, want prod", got)
	}
}
