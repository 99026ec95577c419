//go:build windows

package ledger

import "os"

// processGone reports whether no process of this host has id pid. On Windows os.FindProcess
// opens the process, which fails when there is none; a process that has exited but whose handle
// another process still holds counts as running, so its lease is waited out.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	_ = p.Release()
	return false
}
