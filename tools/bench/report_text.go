package bench

import (
	"fmt"
	"strings"
)

func secondsList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// num writes a rate with thousands separators and no decimals, or two significant decimals
// below 10 (large messages move at a few per second).
func num(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return groupThousands(int64(v + 0.5))
}

// oneLine keeps a table-safe, bounded version of an error.
func oneLine(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "/")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
