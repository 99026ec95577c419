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
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// transferLoop migrates every queue named prefix* as an operator without the provider would:
// `artemis transfer` once per non-empty queue (the target queues already exist), from a shell
// pipeline running parallel of them at a time (xargs -P; 1 is a plain loop). Each transfer is
// given its queue's depth (--message-count), as the move benchmark gives it, so that it ends
// when its queue is moved instead of after its receive timeout. Its CPU time is the shell's,
// xargs's and every JVM's (rusage counts the waited-for descendants).
func (m *migration) transferLoop(ctx context.Context, prefix string, parallel int, timeout time.Duration) (pr ProcessRun, command string, invocations int, err error) {
	dir, err := os.MkdirTemp(m.mcfg.WorkDir, "loop-")
	if err != nil {
		return pr, "", 0, fmt.Errorf("a folder for the loop: %w", err)
	}
	defer os.RemoveAll(dir)
	var list strings.Builder
	for _, q := range m.queues {
		if q.Count > 0 {
			fmt.Fprintf(&list, "%s %d\n", queueName(prefix, q), q.Count)
			invocations++
		}
	}
	inner, err := m.loopTransferCommand()
	if err != nil {
		return pr, "", 0, err
	}
	command = fmt.Sprintf("xargs -P %d -n 2 sh -c '%s' < queues.txt", parallel, inner)
	script := "#!/usr/bin/env bash\n# artemis transfer per queue: each line of queues.txt is a queue and its depth.\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\nexec " + command + "\n"
	for name, text := range map[string]string{"queues.txt": list.String(), "loop.sh": script} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return pr, command, invocations, fmt.Errorf("writing the loop's %s: %w", name, err)
		}
	}
	logPath := filepath.Join(dir, "loop.log")
	out, err := os.Create(logPath)
	if err != nil {
		return pr, command, invocations, fmt.Errorf("creating the loop's log: %w", err)
	}
	defer out.Close()

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "bash", filepath.Join(dir, "loop.sh"))
	// Cancelling kills the whole pipeline, every JVM included, not bash alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// ARTEMIS_INSTANCE unset: the CLI runs with its own defaults, as ArtemisCLI runs it.
	cmd.Env = append(os.Environ(), "ARTEMIS_INSTANCE=", "ARTEMIS_HOME="+m.cli.Home, "ARTEMIS_USER="+m.cli.User, "ARTEMIS_PASSWORD="+m.cli.Password)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return pr, command, invocations, fmt.Errorf("starting the loop: %w", err)
	}
	runErr := cmd.Wait()
	wall := time.Since(start)
	raw, _ := os.ReadFile(logPath)
	pr = processRun(cmd.ProcessState, wall, harness.Tail(string(raw), applyOutputTail))
	if runErr != nil {
		return pr, command, invocations, fmt.Errorf("the artemis transfer loop: %w: %s", runErr, harness.LastLines(pr.OutputTail, 8))
	}
	ended, moved := transferTotals(string(raw))
	if ended != invocations || moved != m.mres.Totals.Messages {
		return pr, command, invocations, fmt.Errorf("%d artemis transfer runs report %d messages moved; want %d runs and %d messages",
			ended, moved, invocations, m.mres.Totals.Messages)
	}
	return pr, command, invocations, nil
}

// loopTransferCommand is the artemis transfer command xargs runs per queue, as sh -c text: the
// queue is $0 and its depth $1; the password comes from the environment, so that the command
// shown holds none. artemis transfer runs with its defaults (core, its default commit interval).
func (m *migration) loopTransferCommand() (string, error) {
	ct := Contender{ID: ContenderCoreDflt, Tool: ToolArtemisTransfer, Protocol: "core"}
	const queue, count = "\x00queue", 1
	args := m.cli.TransferArgs(ct, m.srcURLs, m.tgtURLs, queue, queue, count)
	parts := []string{`"$ARTEMIS_HOME/bin/artemis"`}
	for i, a := range args {
		prev := ""
		if i > 0 {
			prev = args[i-1]
		}
		switch {
		case a == queue:
			a = `"$0"`
		case prev == "--message-count":
			a = `"$1"`
		case strings.HasSuffix(prev, "-password"):
			a = `"$ARTEMIS_PASSWORD"`
		case strings.HasSuffix(prev, "-user"):
			a = `"$ARTEMIS_USER"`
		case strings.ContainsAny(a, "'\"$`\\ \t\n"):
			return "", fmt.Errorf("artemis transfer argument %q cannot be written into the loop's command", a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " "), nil
}

// transferTotals counts the artemis transfer runs in a loop's output that reported their total,
// and the messages they report moved.
func transferTotals(output string) (runs int, moved int64) {
	for _, match := range transferredTotal.FindAllStringSubmatch(output, -1) {
		n, _ := strconv.ParseInt(match[1], 10, 64)
		runs++
		moved += n
	}
	return runs, moved
}
