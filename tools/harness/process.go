package harness

import (
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/prometheus/procfs"
)

// ChildNamed returns the pid of a child of parent whose executable is named name, or 0.
//
// It looks through every process for one whose parent (from /proc/PID/stat) is parent and
// compares the base name of its executable (/proc/PID/exe). That is exact where the
// alternatives are not: a command name (/proc/PID/comm) is cut to 15 bytes, so
// "terraform-provi" matches every terraform-provider-*, and a process may rename it;
// /proc/PID/task/*/children needs CONFIG_PROC_CHILDREN and, the kernel says, is reliable only
// while the children are stopped.
func ChildNamed(parent int, name string) int {
	procs, err := procfs.AllProcs()
	if err != nil {
		return 0
	}
	for _, p := range procs {
		if childNamed(p, parent, name) {
			return p.PID
		}
	}
	return 0
}

// isChildNamed reports whether pid is a child of parent whose executable is named name.
func isChildNamed(pid, parent int, name string) bool {
	p, err := procfs.NewProc(pid)
	return err == nil && childNamed(p, parent, name)
}

// childNamed is isChildNamed of a process found. A process that ends meanwhile, or whose files
// this user may not read, is none.
func childNamed(p procfs.Proc, parent int, name string) bool {
	if stat, err := p.Stat(); err != nil || stat.PPID != parent {
		return false
	}
	exe, err := p.Executable()
	return err == nil && exe != "" && filepath.Base(exe) == name
}

// Alive reports whether a process exists and is not a zombie.
func Alive(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	stat, err := p.Stat()
	return err == nil && stat.State != "Z"
}

// Kill sends SIGKILL to one process.
func Kill(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill -9 %d: %w", pid, err)
	}
	return nil
}
