package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Plan runs `terraform plan` of the workspace's configuration and returns its wall time, from
// terraform's start to its exit: terraform's start, the provider's and the plan, as an operator
// waits for it before an apply. args are added to the plan's command line (e.g. -parallelism=10).
// Its output goes to plan-N.log in the workspace; timeout bounds it, its process group is killed
// after it or when ctx ends.
func (w *Workspace) Plan(ctx context.Context, timeout time.Duration, args ...string) (time.Duration, error) {
	w.plans++
	logPath := filepath.Join(w.Dir, fmt.Sprintf("plan-%d.log", w.plans))
	logFile, err := os.Create(logPath)
	if err != nil {
		return 0, fmt.Errorf("creating terraform plan's log: %w", err)
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.Terraform, append([]string{"-chdir=" + w.Dir, "plan", "-input=false", "-no-color", "-lock=false"}, args...)...)
	// Cancelling kills the plan's whole group, provider included, not terraform alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(append(os.Environ(), "TF_CLI_CONFIG_FILE="+w.CLIConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"), w.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		raw, _ := os.ReadFile(logPath)
		return wall, fmt.Errorf("terraform plan in %s: %w: %s", w.Dir, err, LastLines(string(raw), 8))
	}
	return wall, nil
}
