package core

import (
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

func TestHeapPauses_OnlyWhileTheAddressPagesAndTheHeapIsAtTheThreshold(t *testing.T) {
	heap := func(used, limit int64) artemis.HeapUsage { return artemis.HeapUsage{Used: used, Max: limit} }
	for _, tc := range []struct {
		name    string
		paging  bool
		heap    artemis.HeapUsage
		percent int
		want    bool
	}{
		{"pages, heap above", true, heap(95, 100), 90, true},
		{"pages, heap at the threshold", true, heap(90, 100), 90, true},
		{"pages, heap below", true, heap(89, 100), 90, false},
		{"does not page, heap above", false, heap(99, 100), 90, false},
		{"guard off", true, heap(99, 100), -1, false},
		{"heap without a max", true, heap(99, 0), 90, false},
		{"large heaps do not overflow", true, heap(15<<30, 16<<30), 90, true},
	} {
		if got := heapPauses(tc.paging, tc.heap, tc.percent); got != tc.want {
			t.Errorf("%s: heapPauses = %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestHeapWaiting_SaysTheFiguresAndWhatToDo(t *testing.T) {
	got := heapWaiting("us", "orders", "orders", artemis.HeapUsage{Used: 1900 << 20, Max: 2048 << 20}, 90)
	for _, want := range []string{`address orders on broker "us" pages`, "92% used", "1900 of 2048 MiB", "pauses from 90%",
		"consumers drain queue orders", "-Xmx", "max-size-bytes"} {
		if !strings.Contains(got, want) {
			t.Errorf("wait %q lacks %q", got, want)
		}
	}
}
