package move

import (
	"testing"
	"time"
)

// TestDecideRecovery_ResumesOrRestartsEveryRunAKillCanLeave lists what a kill at each instant of
// a move's start and end leaves on the source broker, and what the next apply does with it.
func TestDecideRecovery_ResumesOrRestartsEveryRunAKillCanLeave(t *testing.T) {
	const grace = time.Minute
	old := 2 * grace
	cases := []struct {
		name  string
		state runState
		want  recovery
	}{
		{"killed with only the manifest queue", runState{Age: old}, recoverRestart},
		{"killed after the manifest, before the staging queues", runState{Manifest: true, Age: old}, recoverResume},
		{"killed after the staging queues", runState{Manifest: true, Age: old}, recoverResume},
		{"killed during the first staging chunk", runState{Manifest: true, Staged: 100, Age: old}, recoverResume},
		{"killed after the staging queue was removed", runState{Manifest: true, Age: old}, recoverResume},
		{"a live process resumes it", runState{Manifest: true, Held: true, Staged: 5, Age: old}, recoverResume},
		{"the manifest record consumed, nothing staged", runState{Age: old}, recoverRestart},
		{"the manifest record consumed, messages staged", runState{Staged: 100, Age: old}, recoverRebuild},
		{"no manifest, only quarantined messages", runState{Staged: 1, Age: old}, recoverRebuild},
		{"no manifest yet, a process holds the lease", runState{Held: true, Age: old}, recoverWait},
		{"no manifest yet, a relay holds staging", runState{Held: true, Staged: 100, Age: old}, recoverWait},
		{"no manifest, created a moment ago", runState{Age: time.Second}, recoverWait},
		{"no manifest, staged, created a moment ago", runState{Staged: 3, Age: time.Second}, recoverWait},
		{"no manifest, t0 in the future (clock skew)", runState{Age: -time.Second}, recoverWait},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := decideRecovery(c.state, grace); got != c.want {
				t.Errorf("decideRecovery(%+v) = %s, want %s", c.state, got, c.want)
			}
		})
	}
}
