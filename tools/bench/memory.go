package bench

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// MemoryAtPeak is where a relaying process's memory was at its highest resident set read: how
// much was the executable's own pages (file-backed: code, read-only data, shared libraries)
// and how much anonymous (heap, stacks, runtime). For the engine's own child process it also
// says what the Go heap held and which of it go-amqp's copies of the messages were.
type MemoryAtPeak struct {
	RSSKiB  int64 `json:"rss_kib"`  // the highest VmRSS read (VmHWM can be a little higher)
	AnonKiB int64 `json:"anon_kib"` // RssAnon at that read
	FileKiB int64 `json:"file_kib"` // RssFile at that read
	// StartKiB is the process's resident set before the run began (the child only).
	StartKiB int64 `json:"start_kib,omitempty"`
	// HeapLiveKiB is the most the Go heap held live after a collection (/gc/heap/live).
	HeapLiveKiB int64 `json:"heap_live_kib,omitempty"`
	// Held is what the heap profile attributed to go-amqp's copies of the messages, at the
	// collection where they came to the most.
	Held *ClientCopies `json:"held,omitempty"`
}

// ClientCopies are the live bytes of go-amqp's copies of the messages a relay holds, from the
// Go heap profile (allocations of 512 KiB and more are all in it; smaller ones are sampled and
// scaled, as pprof scales them).
type ClientCopies struct {
	// ReceiveKiB: the receiver's buffer a message's transfer frames are put together in; it
	// keeps its size between messages.
	ReceiveKiB int64 `json:"receive_kib"`
	// DecodedKiB: the message decoded from that buffer (its body copied out, its headers and
	// properties), as the receiver hands it to the relay.
	DecodedKiB int64 `json:"decoded_kib"`
	// SendKiB: the sender's buffer a message is encoded into before it is cut into frames; it
	// too keeps its size between messages.
	SendKiB int64 `json:"send_kib"`
}

// Total is the three together.
func (c ClientCopies) Total() int64 { return c.ReceiveKiB + c.DecodedKiB + c.SendKiB }

// memoryStatus is a process's resident set from /proc/<pid>/status, in KiB.
type memoryStatus struct{ peak, rss, anon, file int64 }

// readMemoryStatus reads pid's (0: this process's) resident set.
func readMemoryStatus(pid int) (memoryStatus, error) {
	path := "/proc/self/status"
	if pid > 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return memoryStatus{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	var s memoryStatus
	for _, f := range []struct {
		name string
		into *int64
	}{{"VmHWM", &s.peak}, {"VmRSS", &s.rss}, {"RssAnon", &s.anon}, {"RssFile", &s.file}} {
		if *f.into, err = parseStatusField(string(raw), f.name); err != nil {
			return memoryStatus{}, err
		}
	}
	return s, nil
}

// rssTracker keeps the highest resident set read and its split.
type rssTracker struct {
	mu   sync.Mutex
	peak int64 // the highest VmHWM read
	at   MemoryAtPeak
}

func (t *rssTracker) observe(s memoryStatus) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peak = max(t.peak, s.peak)
	if s.rss > t.at.RSSKiB {
		t.at.RSSKiB, t.at.AnonKiB, t.at.FileKiB = s.rss, s.anon, s.file
	}
}

func (t *rssTracker) result() (int64, MemoryAtPeak) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.peak, t.at
}

// memoryDetailFrom is the message size from which the relay child follows its own memory in
// detail: where the memory of a move of large messages goes is the question; at 1 KiB the
// polling would only add to the relay's CPU.
const memoryDetailFrom = 1 << 20

// ownMemoryPoll is how often the relay child reads its own memory. Reading /proc/self/status
// and a few runtime metrics costs microseconds; the heap profile is walked only after a
// collection.
const ownMemoryPoll = 10 * time.Millisecond

// watchOwnMemory follows this process's memory until the returned function is called, which
// returns what it saw. It runs in the relay child, beside the run.
func watchOwnMemory() (stop func() MemoryAtPeak) {
	var tracker rssTracker
	start, _ := readMemoryStatus(0)
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	var liveMax uint64
	var cycles uint64
	var held ClientCopies
	var records []runtime.MemProfileRecord
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(ownMemoryPoll)
		defer t.Stop()
		for {
			if s, err := readMemoryStatus(0); err == nil {
				tracker.observe(s)
			}
			metrics.Read(samples)
			if samples[0].Value.Kind() == metrics.KindUint64 {
				liveMax = max(liveMax, samples[0].Value.Uint64())
			}
			if samples[1].Value.Kind() == metrics.KindUint64 && samples[1].Value.Uint64() != cycles {
				cycles = samples[1].Value.Uint64()
				records = heapRecords(records)
				if c := classifyHeap(records); c.Total() > held.Total() {
					held = c
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() MemoryAtPeak {
		close(done)
		<-finished
		_, at := tracker.result()
		at.StartKiB = start.rss
		at.HeapLiveKiB = int64(liveMax / 1024)
		if held.Total() > 0 {
			at.Held = &held
		}
		return at
	}
}

// heapRecords reads the heap profile into records (grown as needed).
func heapRecords(records []runtime.MemProfileRecord) []runtime.MemProfileRecord {
	for {
		n, ok := runtime.MemProfile(records[:cap(records)], false)
		if ok {
			return records[:n]
		}
		records = make([]runtime.MemProfileRecord, n+n/4+16)
	}
}

// Where go-amqp v1 allocates its copies of a message, by the functions on the allocating stack.
const (
	frameReceiveAssembly = "go-amqp.(*Receiver).muxReceive"
	frameDecode          = "go-amqp.(*Message).Unmarshal"
	frameSendEncoding    = "go-amqp.(*Sender).send"
)

// classifyHeap sums the live bytes the heap profile attributes to go-amqp's three copies.
func classifyHeap(records []runtime.MemProfileRecord) ClientCopies {
	var c ClientCopies
	for i := range records {
		r := &records[i]
		bytes := scaledInUse(r.InUseBytes(), r.InUseObjects())
		if bytes <= 0 {
			continue
		}
		var into *int64
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			switch {
			case strings.Contains(f.Function, frameDecode):
				into = &c.DecodedKiB
			case strings.Contains(f.Function, frameReceiveAssembly) && into == nil:
				into = &c.ReceiveKiB
			case strings.Contains(f.Function, frameSendEncoding) && into == nil:
				into = &c.SendKiB
			}
			if !more {
				break
			}
		}
		if into != nil {
			*into += bytes / 1024
		}
	}
	return c
}

// scaledInUse estimates the live bytes behind a profile record's sampled ones: an allocation of
// size s is sampled with probability 1 - exp(-s/rate), as pprof undoes it.
func scaledInUse(bytes, objects int64) int64 {
	rate := runtime.MemProfileRate
	if bytes <= 0 || objects <= 0 || rate <= 1 {
		return max(bytes, 0)
	}
	avg := float64(bytes) / float64(objects)
	return int64(float64(bytes) / (1 - math.Exp(-avg/float64(rate))))
}
