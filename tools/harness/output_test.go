package harness

import "testing"

func TestTailAndLastLines(t *testing.T) {
	if got := LastLines("a\nb\nc\n", 2); got != "b | c" {
		t.Errorf("LastLines %q", got)
	}
	if got := Tail("  abcdef  ", 5); got != "def" {
		t.Errorf("Tail %q", got)
	}
	var b TailBuffer
	b.Max = 4
	_, _ = b.Write([]byte("abc"))
	_, _ = b.Write([]byte("def "))
	if got := b.String(); got != "def" {
		t.Errorf("TailBuffer %q", got)
	}
}
