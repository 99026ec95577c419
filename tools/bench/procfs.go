package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. Linux fixes it at 100
// on every architecture Go supports, whatever the kernel's own HZ.
const clockTicks = 100

// ProcessCPU is the CPU time a process has used (user + system), from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	return processCPU(fs, pid)
}

// processCPU is ProcessCPU on the proc file system fs, which tests fake.
func processCPU(fs procfs.FS, pid int) (time.Duration, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	stat, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	// The ticks, not procfs's CPUTime in float seconds, so that the duration is exact.
	return time.Duration(stat.UTime+stat.STime) * time.Second / clockTicks, nil
}

// PeakRSSKiB is a process's peak resident set (VmHWM) in KiB, from /proc/<pid>/status; pid 0
// means this process. A child must read its own: the ru_maxrss a parent gets for a child
// carries the parent's high-water mark across fork and exec.
func PeakRSSKiB(pid int) (int64, error) {
	s, err := readMemoryStatus(pid)
	return s.peak, err
}

// parseStatusField reads a "Name:   1234 kB" line of /proc/<pid>/status.
func parseStatusField(status, name string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		v, ok := strings.CutPrefix(line, name+":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			break
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("/proc status has no %s line", name)
}

// Median is the middle value (the mean of the two middle ones for an even count); 0 for none.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// watchPeakRSS reads the memory of the process pid names (0: none yet) every 100 ms until the
// returned function is called, which returns the highest peak RSS (VmHWM) read and the split of
// the highest resident set read. A short-lived growth between two reads is missed.
func watchPeakRSS(pid func() int) (stop func() (int64, MemoryAtPeak)) {
	var tracker rssTracker
	done := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if p := pid(); p > 0 {
				if s, err := readMemoryStatus(p); err == nil {
					tracker.observe(s)
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (int64, MemoryAtPeak) {
		close(done)
		<-polled
		return tracker.result()
	}
}

// brokerPID reads a broker's pid file, as scripts/testenv.sh writes it.
func brokerPID(stateDir, name string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(stateDir, "brokers", name+".pid"))
	if err != nil {
		return 0, fmt.Errorf("reading the pid of broker %s: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return 0, fmt.Errorf("the pid file of broker %s holds %q", name, raw)
	}
	if _, err := ProcessCPU(pid); err != nil {
		return 0, fmt.Errorf("broker %s (pid %d) is not running: %w", name, pid, err)
	}
	return pid, nil
}
