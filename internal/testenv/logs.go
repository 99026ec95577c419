package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CountInLog counts the occurrences of text in a broker's log: its console output
// (log/console.log of its instance), which the environment appends to across restarts and which,
// unlike the broker's own artemis.log, never rolls over at midnight. A broker may write a line a
// moment after the event a test saw; while the count is 0 the file is read again, every 200 ms for
// up to 10 s, so a test that expects a line does not depend on the machine's speed, and one that
// expects none waits 10 s.
func (e *Env) CountInLog(t testing.TB, broker, text string) int {
	t.Helper()
	path := filepath.Join(e.Broker(t, broker).InstanceDir, "log", "console.log")
	count := func() int {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("reading the log of broker %s: %v", broker, err)
		}
		return strings.Count(string(raw), text)
	}
	n := count()
	for deadline := time.Now().Add(10 * time.Second); n == 0 && time.Now().Before(deadline); n = count() {
		time.Sleep(200 * time.Millisecond)
	}
	return n
}
