package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Apply is one `terraform apply` in progress.
type Apply struct {
	cmd            *exec.Cmd
	started, ended time.Time
	done           chan struct{}
	err            error
	logPath        string // terraform's output

	mu       sync.Mutex
	provider int // the provider child last found
}

// StartApply starts `terraform apply -auto-approve` in its own process group, so that a
// signal to the group reaches terraform and its provider as a terminal's Ctrl-C would, and
// nothing else. Its output goes to apply-N.log in the workspace (and to Log). timeout bounds
// it: the group is killed after it, or when ctx ends. env is added to this apply's environment
// only (after Workspace.Env).
func (w *Workspace) StartApply(ctx context.Context, timeout time.Duration, env ...string) (*Apply, error) {
	w.applies++
	logPath := filepath.Join(w.Dir, fmt.Sprintf("apply-%d.log", w.applies))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating terraform's log: %w", err)
	}
	cmd := exec.CommandContext(ctx, w.Terraform, "-chdir="+w.Dir, "apply", "-input=false", "-auto-approve", "-no-color")
	// Cancelling kills the apply's whole group, provider included, not terraform alone.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(append(os.Environ(), "TF_CLI_CONFIG_FILE="+w.CLIConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"), append(append([]string(nil), w.Env...), env...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a := &Apply{cmd: cmd, done: make(chan struct{}), logPath: logPath}
	cmd.Stdout = logFile
	if w.Log != nil {
		cmd.Stdout = io.MultiWriter(logFile, w.Log)
	}
	cmd.Stderr = cmd.Stdout
	a.started = time.Now()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting terraform apply in %s: %w", w.Dir, err)
	}
	go func() {
		a.err = cmd.Wait()
		a.ended = time.Now()
		logFile.Close()
		close(a.done)
	}()
	go func() {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-a.done:
		case <-ctx.Done():
			a.killGroup()
		case <-t.C:
			a.killGroup()
		}
	}()
	return a, nil
}

// Done is closed when terraform has exited.
func (a *Apply) Done() <-chan struct{} { return a.done }

// Wait waits for terraform to exit and returns how it exited (nil: the apply succeeded).
func (a *Apply) Wait() error {
	<-a.done
	return a.err
}

// Started is when the apply was started.
func (a *Apply) Started() time.Time { return a.started }

// Wall is the apply's time from start to exit; call it after Wait.
func (a *Apply) Wall() time.Duration { return a.ended.Sub(a.started) }

// State is terraform's exit state (its rusage counts the provider it waited for); call it
// after Wait.
func (a *Apply) State() *os.ProcessState { return a.cmd.ProcessState }

// LogPath is the file holding terraform's output.
func (a *Apply) LogPath() string { return a.logPath }

// Output is terraform's output so far.
func (a *Apply) Output() string {
	raw, _ := os.ReadFile(a.logPath)
	return string(raw)
}

// Terraform is terraform's process id.
func (a *Apply) Terraform() int { return a.cmd.Process.Pid }

// Interrupt sends SIGINT to terraform's process group, as Ctrl-C in its terminal does.
func (a *Apply) Interrupt() error {
	return syscall.Kill(-a.cmd.Process.Pid, syscall.SIGINT)
}

// KillTerraform sends SIGKILL to terraform alone; its provider child is left running.
func (a *Apply) KillTerraform() error { return a.cmd.Process.Kill() }

// killGroup kills terraform and everything in its process group (its provider).
func (a *Apply) killGroup() { _ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL) }

// ProviderPID is the pid of terraform's terraform-provider-artemis child, or 0 while there is
// none (terraform starts one for the plan and another for the apply). The provider found
// last is checked first, so that polling does not scan /proc each time.
func (a *Apply) ProviderPID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	tf := a.cmd.Process.Pid
	if a.provider > 0 && isChildNamed(a.provider, tf, ProviderExecutable) {
		return a.provider
	}
	a.provider = ChildNamed(tf, ProviderExecutable)
	return a.provider
}

// Provider returns the pid of terraform's terraform-provider-artemis child, waiting up to
// wait for terraform to start it.
func (a *Apply) Provider(wait time.Duration) (int, error) {
	deadline := time.Now().Add(wait)
	for {
		if pid := a.ProviderPID(); pid > 0 {
			return pid, nil
		}
		select {
		case <-a.done:
			return 0, errors.New("terraform exited before its provider could be found")
		default:
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no terraform-provider-artemis child of terraform (pid %d) after %s", a.cmd.Process.Pid, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// OutputJSON returns `terraform output -json name` of the workspace's state: the output's value
// as JSON, terraform's stdout alone, as an operator redirects it into a file.
func (w *Workspace) OutputJSON(ctx context.Context, name string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, w.Terraform, "-chdir="+w.Dir, "output", "-no-color", "-json", name)
	cmd.Env = append(append(os.Environ(), "TF_CLI_CONFIG_FILE="+w.CLIConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"), w.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("terraform output %s in %s: %w: %s", name, w.Dir, err, LastLines(stderr.String(), 8))
	}
	return out, nil
}
