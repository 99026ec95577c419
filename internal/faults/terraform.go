package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BrokerKey is one entry of the provider's brokers map.
type BrokerKey struct {
	AMQPURLs      []string
	ManagementURL string
	Username      string
	Password      string
}

// Workspace is one iteration's terraform working directory: its own configuration and local
// state, run with the provider binary the harness built (dev_overrides: nothing is downloaded).
type Workspace struct {
	Dir       string
	CLIConfig string // TF_CLI_CONFIG_FILE
	Terraform string // the terraform executable
	Log       io.Writer
	applies   int // applies started, which number their logs
}

// providerAddress is the provider's registry address, as dev_overrides names it.
const providerAddress = "registry.terraform.io/artemis-studio/artemis"

// WriteCLIConfig writes a CLI configuration whose dev_overrides point at the folder holding
// the built terraform-provider-artemis, and returns its path.
func WriteCLIConfig(dir, pluginDir string) (string, error) {
	path := filepath.Join(dir, "terraformrc")
	text := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", providerAddress, pluginDir)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("writing the terraform CLI configuration: %w", err)
	}
	return path, nil
}

// transferConfig is the configuration of one iteration: the two broker keys and one
// artemis_queue_transfer of the whole source queue.
type transferConfig struct {
	Source, Target           BrokerKey
	SourceQueue, TargetQueue string
	Create                   time.Duration // timeouts.create
	// LedgerDSN, when set, makes the transfer a copy (mode = "copy") that records in this
	// ledger (the provider's ledger_dsn); a move has no ledger.
	LedgerDSN string
}

// String is the configuration's main.tf.
func (c transferConfig) String() string {
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
	b.WriteString("resource \"artemis_queue_transfer\" \"fault\" {\n")
	if c.LedgerDSN != "" {
		b.WriteString("  mode   = \"copy\"\n")
	}
	fmt.Fprintf(&b, "  source = { broker = \"source\", queue = %q }\n  target = { broker = \"target\", queue = %q }\n  timeouts = { create = %q }\n}\n",
		c.SourceQueue, c.TargetQueue, c.Create.String())
	return b.String()
}

// Apply is one `terraform apply` in progress.
type Apply struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	err     error
	logPath string // terraform's output
}

// StartApply starts `terraform apply -auto-approve` in its own process group, so that a
// signal to the group reaches terraform and its provider as a terminal's Ctrl-C would, and
// nothing else. timeout bounds it: the group is killed after it.
func (w *Workspace) StartApply(ctx context.Context, timeout time.Duration) (*Apply, error) {
	w.applies++
	logPath := filepath.Join(w.Dir, fmt.Sprintf("apply-%d.log", w.applies))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating terraform's log: %w", err)
	}
	cmd := exec.CommandContext(ctx, w.Terraform, "-chdir="+w.Dir, "apply", "-input=false", "-auto-approve", "-no-color")
	// The harness ending kills the apply's whole group, provider included, not terraform alone.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// TF_LOG as FAULTS_TF_LOG says (e.g. INFO shows the relay's progress and waits in the
	// apply logs); off by default, since a TRACE log of every apply is large.
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+w.CLIConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"TF_LOG="+os.Getenv("FAULTS_TF_LOG"), "TF_LOG_PROVIDER=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a := &Apply{cmd: cmd, done: make(chan struct{}), logPath: logPath}
	cmd.Stdout = logFile
	if w.Log != nil {
		cmd.Stdout = io.MultiWriter(logFile, w.Log)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting terraform apply in %s: %w", w.Dir, err)
	}
	a.started = time.Now()
	go func() {
		a.err = cmd.Wait()
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

// Wait waits for terraform to exit and returns its error (nil: the apply succeeded).
func (a *Apply) Wait() error {
	<-a.done
	if a.err != nil {
		return fmt.Errorf("terraform apply (output in %s): %w: %s", a.logPath, a.err, firstErrorLine(a.Output()))
	}
	return nil
}

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

// Provider returns the pid of terraform's terraform-provider-artemis child, waiting up to
// wait for terraform to start it.
func (a *Apply) Provider(wait time.Duration) (int, error) {
	deadline := time.Now().Add(wait)
	for {
		if pid := childNamed(a.cmd.Process.Pid, "terraform-provider-artemis"); pid > 0 {
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

// childNamed returns the pid of a child of parent whose executable is named name, or 0.
func childNamed(parent int, name string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); !ok || ppid != parent {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err == nil && filepath.Base(exe) == name {
			return pid
		}
	}
	return 0
}

// parentOf reads a process's parent pid from /proc/PID/stat.
func parentOf(pid int) (int, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name is in parentheses and may hold spaces: the fields follow the last ')'.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

// alive reports whether a process exists (and is not a zombie).
func alive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// lastLines returns the last n lines of s, joined, for error messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
