package preflight

import (
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// bigCopy is the scale curve's copy: 3,000,000 messages of 1 KiB into a target with Artemis's
// default 2 GiB heap and global-max-size of half of it.
func bigCopy(f *Facts) {
	f.SourceQueue.MessageCount, f.SourceQueue.PersistentSize = 3_000_000, 3_000_000<<10
	f.SelectionKind, f.SelectionCount = selectWholeQueue, 3_000_000
	f.TargetUsage = &artemis.AddressUsage{}
	f.TargetMemory = &TargetMemory{Heap: artemis.HeapUsage{Used: 200 << 20, Max: 2 << 30},
		Global: artemis.GlobalMemory{MaxSize: 1 << 30}}
}

func TestCheck_WeighsThePagingRecordsAgainstTheTargetHeap(t *testing.T) {
	checkRule(t, summaryHeapTight, []ruleCase{
		{name: "scale curve copy: warns with every figure", edit: bigCopy, want: warning("target.queue",
			"3000000 selected message(s), about 2929.7 MiB (1024 bytes a message",
			"takes 1024.0 MiB before it pages (the broker's global-max-size 1024.0 MiB, 0 bytes of it in use)",
			// 3,000,000 - 1,048,576 that fit in memory
			"An estimated 1951424 of them", "an estimated 952.8 MiB (512 bytes a record, an estimate",
			"a max of 2048.0 MiB with 200.0 MiB used now (9%", "leaving about 824.0 MiB",
			"relay pauses", "-Xmx", "at least 2176.8 MiB", "max-size-bytes", "drain", "in parts")},
		{name: "fits in memory: never pages", edit: func(f *Facts) {
			bigCopy(f)
			f.TargetMemory.Global.MaxSize = 4 << 30
		}},
		{name: "pages, and the heap holds the records", edit: func(f *Facts) {
			bigCopy(f)
			f.TargetMemory.Heap.Max = 8 << 30
		}},
		{name: "an address limit pages sooner than the global one", edit: func(f *Facts) {
			bigCopy(f)
			f.SelectionCount = 1_500_000
			f.TargetMemory.Heap.Max = 4 << 30
			f.TargetSettings.MaxSizeBytes = 1 << 20
			f.TargetMemory.Heap.Used = 3500 << 20
			f.TargetUsage.SizeBytes = 512 << 10
		}, want: warning("target.queue", "max-size-bytes 1.0 MiB, 524288 bytes in memory now", "An estimated 1499488 of them")},
		{name: "pages already: every message is a record", edit: func(f *Facts) {
			bigCopy(f)
			f.SelectionCount = 1_800_000
			f.TargetUsage.Paging = true
			f.TargetMemory.Heap.Used = 1200 << 20
		}, want: warning("target.queue", "it pages already", "An estimated 1800000 of them")},
		{name: "a message limit", edit: func(f *Facts) {
			bigCopy(f)
			f.TargetMemory.Global.MaxSize = -1
			f.TargetSettings.MaxSizeMessages = 1000
			f.TargetUsage.Messages = 400
		}, want: warning("target.queue", "max-size-messages 1000, 400 held now", "An estimated 2999400 of them")},
		{name: "no paging limit at all", edit: func(f *Facts) {
			bigCopy(f)
			f.TargetMemory.Global.MaxSize = -1
		}},
		{name: "BLOCK does not page", edit: func(f *Facts) { bigCopy(f); f.TargetSettings.AddressFullPolicy = "BLOCK" }},
		{name: "heap unknown", edit: func(f *Facts) { bigCopy(f); f.TargetMemory = nil }},
		{name: "selection unknown", edit: func(f *Facts) { bigCopy(f); f.SelectionCount = -1 }},
		{name: "records beyond the whole heap, but consumers drain the queue", edit: func(f *Facts) {
			bigCopy(f)
			f.SelectionCount = 6_000_000
			f.TargetQueue.ConsumerCount = 2
		}, want: warning("target.queue", "An estimated 4951424 of them")},
		{name: "records beyond the whole heap are refused, not warned of", edit: func(f *Facts) {
			bigCopy(f)
			f.SelectionCount = 6_000_000
		}},
		{name: "typical"},
	})
	checkRule(t, summaryHeapTooSmall, []ruleCase{
		{name: "records beyond the whole heap, nothing consumes", edit: func(f *Facts) {
			bigCopy(f)
			f.SelectionCount = 6_000_000
		}, want: refusal("target.queue", "An estimated 4951424 of them", "an estimated 2417.7 MiB",
			"exceed the whole heap", "no consumer", "Nothing was transferred", "-Xmx")},
		{name: "unknown message size: every message taken as paged", edit: func(f *Facts) {
			bigCopy(f)
			f.SourceQueue.PersistentSize = 0
			f.SelectionCount = 5_000_000
		}, want: refusal("target.queue", "An estimated 5000000 of them")},
		{name: "the scale curve copy fits the heap's max", edit: bigCopy},
	})
}
