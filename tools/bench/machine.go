package bench

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Machine is what the numbers were measured on.
type Machine struct {
	CPUModel    string `json:"cpu_model"`
	Cores       int    `json:"cores"`
	MemoryMiB   int64  `json:"memory_mib"`
	Kernel      string `json:"kernel"`
	GoVersion   string `json:"go_version"`
	JavaVersion string `json:"java_version"`
	Artemis     string `json:"artemis_version"` // as the source broker reports it
	Commit      string `json:"commit"`          // "+dirty" when the work tree had changes
	Date        string `json:"date"`
	// LoadAtStart and LoadAtEnd are the 1, 5 and 15 minute load averages when the benchmark
	// started and ended: other work on the machine shows there.
	LoadAtStart string `json:"load_at_start"`
	LoadAtEnd   string `json:"load_at_end"`
}

// LoadAverage is /proc/loadavg's three load averages, or "unknown".
func LoadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// ReadMachine gathers the machine's facts; any it cannot read stay "unknown".
func ReadMachine(ctx context.Context, repoDir string) Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		CPUModel: "unknown", Kernel: "unknown", JavaVersion: "unknown", Commit: "unknown", LoadAtStart: LoadAverage()}
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kib, err := parseStatusField(string(raw), "MemTotal"); err == nil {
			m.MemoryMiB = kib / 1024
		}
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(raw))
	}
	cmdCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// java -version writes to stderr; its first line names the version.
	if out, err := exec.CommandContext(cmdCtx, "java", "-version").CombinedOutput(); err == nil {
		m.JavaVersion = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(cmdCtx, "git", args...)
		cmd.Dir = repoDir
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if head, err := git("rev-parse", "--short=12", "HEAD"); err == nil && head != "" {
		m.Commit = head
		if status, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && status != "" {
			m.Commit += "+dirty"
		}
	}
	return m
}
