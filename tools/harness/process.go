package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ChildNamed returns the pid of a child of parent whose executable is named name, or 0.
//
// It scans /proc for processes whose parent (from /proc/PID/stat) is parent and compares the
// base name of /proc/PID/exe. That is exact where the alternatives are not: a command name
// (/proc/PID/comm) is cut to 15 bytes, so "terraform-provi" matches every
// terraform-provider-*, and a process may rename it; /proc/PID/task/*/children needs
// CONFIG_PROC_CHILDREN and, the kernel says, is reliable only while the children are stopped.
func ChildNamed(parent int, name string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if isChildNamed(pid, parent, name) {
			return pid
		}
	}
	return 0
}

// isChildNamed reports whether pid is a child of parent whose executable is named name.
func isChildNamed(pid, parent int, name string) bool {
	if ppid, ok := parentOf(pid); !ok || ppid != parent {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return err == nil && filepath.Base(exe) == name
}

// statFields are the fields of /proc/PID/stat after the command name, which is in
// parentheses and may hold spaces: fields[0] is the state, fields[1] the parent pid.
func statFields(pid int) ([]string, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// parentOf reads a process's parent pid from /proc/PID/stat.
func parentOf(pid int) (int, bool) {
	fields, ok := statFields(pid)
	if !ok || len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

// Alive reports whether a process exists and is not a zombie.
func Alive(pid int) bool {
	fields, ok := statFields(pid)
	return ok && len(fields) > 0 && fields[0] != "Z"
}

// Kill sends SIGKILL to one process.
func Kill(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill -9 %d: %w", pid, err)
	}
	return nil
}
