package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// outOfMemory is how a broker's JVM says its heap is exhausted, in its log.
const outOfMemory = "java.lang.OutOfMemoryError"

// brokerHeap reads the maximum heap (-Xmx) a broker's JVM was started with, as given; empty
// when it cannot be read.
func brokerHeap(pid int) string {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	return heapFromCmdline(raw)
}

// heapFromCmdline finds the last -Xmx of a NUL-separated command line (the last one wins).
func heapFromCmdline(cmdline []byte) string {
	heap := ""
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if v, ok := strings.CutPrefix(string(arg), "-Xmx"); ok {
			heap = v
		}
	}
	return heap
}

// outOfMemoryCount counts the OutOfMemoryErrors in a broker's console output
// (brokers/NAME/log/console.log of the environment's state folder, which never rolls over): a broker whose heap runs out stops taking messages and
// answering management, which a relay sees only as a broker that does not answer.
func outOfMemoryCount(stateDir, name string) int {
	raw, err := os.ReadFile(filepath.Join(stateDir, "brokers", name, "log", "console.log"))
	if err != nil {
		return 0
	}
	return bytes.Count(raw, []byte(outOfMemory))
}

// brokerHealth is what the brokers' logs held of out-of-memory errors at one moment.
type brokerHealth struct{ source, target int }

func (b *bench) brokerHealth() brokerHealth {
	dir := b.cfg.Env.StateDir
	return brokerHealth{source: outOfMemoryCount(dir, "source"), target: outOfMemoryCount(dir, "target")}
}

// since says which broker logged out-of-memory errors after h0, for a run's record.
func (h brokerHealth) since(h0 brokerHealth) []string {
	var out []string
	for _, br := range []struct {
		name     string
		now, was int
	}{{"source", h.source, h0.source}, {"target", h.target, h0.target}} {
		if n := br.now - br.was; n > 0 {
			out = append(out, fmt.Sprintf("the %s broker logged %s (%s)", br.name, plural(n, outOfMemory), "heap exhausted"))
		}
	}
	return out
}

var (
	xmlComment    = regexp.MustCompile(`(?s)<!--.*?-->`)
	globalMaxSize = regexp.MustCompile(`<global-max-size>\s*([^<\s]+)\s*</global-max-size>`)
)

// brokerGlobalMaxSize reads the memory a broker gives messages before its addresses page
// (global-max-size in brokers/NAME/etc/broker.xml of the environment's state folder); empty
// when the file sets none, which is Artemis's default: half the heap.
func brokerGlobalMaxSize(stateDir, name string) string {
	raw, err := os.ReadFile(filepath.Join(stateDir, "brokers", name, "etc", "broker.xml"))
	if err != nil {
		return ""
	}
	return globalMaxSizeOf(raw)
}

// globalMaxSizeOf finds global-max-size in a broker.xml, outside comments.
func globalMaxSizeOf(brokerXML []byte) string {
	if m := globalMaxSize.FindSubmatch(xmlComment.ReplaceAll(brokerXML, nil)); m != nil {
		return string(m[1])
	}
	return ""
}
