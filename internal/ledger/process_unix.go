//go:build !windows

package ledger

import (
	"errors"
	"syscall"
)

// processGone reports whether no process of this host has id pid: signal 0 checks that a
// process exists without signalling it.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
