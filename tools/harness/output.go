package harness

import (
	"strings"
	"sync"
)

// LastLines returns the last n lines of s, joined by " | ", for error messages.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// Tail is the last n bytes of s, trimmed, as a TailBuffer of Max n keeps them.
func Tail(s string, n int) string {
	if over := len(s) - n; over > 0 {
		s = s[over:]
	}
	return strings.TrimSpace(s)
}

// TailBuffer keeps the last Max bytes written to it, for error messages.
type TailBuffer struct {
	Max int
	mu  sync.Mutex
	buf []byte
}

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is what the buffer holds, trimmed.
func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
