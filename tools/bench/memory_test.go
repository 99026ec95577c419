package bench

import (
	"bytes"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/Azure/go-amqp"
)

func TestReadMemoryStatus_ReadsThisProcesssResidentSet(t *testing.T) {
	s, err := readMemoryStatus(0)
	if err != nil {
		t.Fatal(err)
	}
	if s.rss <= 0 || s.peak < s.rss || s.anon <= 0 || s.file <= 0 || s.anon+s.file > s.rss+4 {
		t.Fatalf("implausible resident set %+v: want rss > 0, VmHWM >= VmRSS, anon and file > 0 and summing to about VmRSS", s)
	}
}

func TestRSSTracker_KeepsTheSplitOfTheHighestRead(t *testing.T) {
	var tr rssTracker
	tr.observe(memoryStatus{peak: 50, rss: 50, anon: 30, file: 20})
	tr.observe(memoryStatus{peak: 80, rss: 70, anon: 50, file: 20})
	tr.observe(memoryStatus{peak: 90, rss: 60, anon: 35, file: 25})
	peak, at := tr.result()
	if peak != 90 || at.RSSKiB != 70 || at.AnonKiB != 50 || at.FileKiB != 20 {
		t.Fatalf("got peak %d and %+v, want peak 90 and the split of the read of 70", peak, at)
	}
}

func TestScaledInUse_UndoesTheHeapProfilesSampling(t *testing.T) {
	rate := int64(runtime.MemProfileRate)
	if got := scaledInUse(10<<20, 1); math.Abs(float64(got-10<<20)) > 1 {
		t.Errorf("a 10 MiB allocation is always sampled: got %d, want %d", got, 10<<20)
	}
	// One sampled object of the profile rate's size stands for 1/(1-1/e) of its bytes.
	want := float64(rate) / (1 - math.Exp(-1))
	if got := scaledInUse(rate, 1); math.Abs(float64(got)-want) > 1 {
		t.Errorf("got %d, want %.0f", got, want)
	}
	if got := scaledInUse(0, 0); got != 0 {
		t.Errorf("nothing in use: got %d", got)
	}
}

// TestClassifyHeap_FindsGoAMQPsDecodedCopy decodes a message with go-amqp itself and checks
// that the heap profile's record of it is attributed to the decoded copy: the function names
// the classification looks for are go-amqp's own.
func TestClassifyHeap_FindsGoAMQPsDecodedCopy(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	encoded, err := (&amqp.Message{Data: [][]byte{bytes.Repeat([]byte{'x'}, 2<<20)}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var decoded amqp.Message
	if err := decoded.UnmarshalBinary(encoded); err != nil {
		t.Fatal(err)
	}
	// A profile shows an allocation once the collection after it has ended, and is up to two
	// collections old.
	runtime.GC()
	runtime.GC()
	c := classifyHeap(heapRecords(nil))
	runtime.KeepAlive(&decoded)
	if c.DecodedKiB < 2<<10 {
		t.Fatalf("the decoded 2 MiB body is not attributed to go-amqp's decoded copy: %+v", c)
	}
	if c.ReceiveKiB != 0 || c.SendKiB != 0 {
		t.Fatalf("nothing was received or sent through a link, yet %+v", c)
	}
}

func TestWriteLargeMemory_SplitsTheEnginesAndTheProvidersPeak(t *testing.T) {
	res := syncedResults(t)
	lc := caseOf(res.Cases, 20, 10*mib)
	for i := range lc.Runs {
		switch lc.Runs[i].Contender {
		case ContenderOurs:
			lc.Runs[i].Process.Memory = &MemoryAtPeak{RSSKiB: 59 << 10, AnonKiB: 47 << 10, FileKiB: 12 << 10, StartKiB: 11 << 10, HeapLiveKiB: 39 << 10,
				Held: &ClientCopies{ReceiveKiB: 12 << 10, DecodedKiB: 10 << 10, SendKiB: 15 << 10}}
		case ContenderApply:
			lc.Runs[i].Process.Memory = &MemoryAtPeak{RSSKiB: 66 << 10, AnonKiB: 45 << 10, FileKiB: 21 << 10}
		}
	}
	finishCase(lc, res.Contenders)
	out := section(writeLargeMemory, res)
	reportHas(t, out,
		"| of it, the executable's pages (file-backed) | 12.0 | 21.0 |",
		"| of it, anonymous (heap, stacks, runtime) | 47.0 | 45.0 |",
		"| go-amqp: the receiver's buffer a message's frames are put together in | 12.0 | – |",
		"go-amqp holds a 10 MiB message 3.7 times over** (37.0 MiB)",
		"95% of the most the heap held live (39.0 MiB)",
		// The provider's 66 MiB is over the goal's 64: 64 - 21 = 43 MiB besides its pages.
		"the provider has 43.0 MiB for everything but its executable's pages",
	)
	for _, tg := range syncedTargets(res) {
		if strings.Contains(tg.Goal, "20 x 10 MiB") && !strings.Contains(tg.Measured, "go-amqp holds each message 3.7 times over (37.0 MiB") {
			t.Errorf("the large-message goal does not name go-amqp's copies: %s", tg.Measured)
		}
	}
}

func TestWriteLargeMemory_NothingRecordedWritesNothing(t *testing.T) {
	var b strings.Builder
	writeLargeMemory(&b, syncedResults(t))
	if b.Len() != 0 {
		t.Fatalf("runs without memory records wrote:\n%s", b.String())
	}
}
