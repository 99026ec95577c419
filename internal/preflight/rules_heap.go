package preflight

import (
	"fmt"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

const (
	summaryHeapTooSmall = "Target heap cannot hold the paging records of the selection"
	summaryHeapTight    = "Target heap may not hold the paging records of the selection"
)

// PageRecordHeapBytes is the estimated heap that one message sent with a duplicate id to a
// paging address keeps on an Artemis broker until it is consumed (its page-transaction record,
// also loaded again at restart). Measured on Artemis 2.40 with a 1 GiB heap: after a full GC,
// 340,000 such messages of 1 KiB kept ~177 bytes each (124 to 221 per 100,000-message step),
// the same messages without a duplicate id none; ~3x that covers what a running broker has not
// collected yet and its record maps' growth.
const PageRecordHeapBytes = 512

// TargetMemory is what the heap rule needs of the target broker's memory now.
type TargetMemory struct {
	Heap artemis.HeapUsage
	// Global is the broker's global-max-size and its addresses' memory use.
	Global artemis.GlobalMemory
}

// pagingEstimate is what the selection would do to the target's heap if the target address
// pages: every figure the heap rule's findings quote.
type pagingEstimate struct {
	count, bytes, avg int64
	roomBytes         int64 // what the address takes in memory before it pages
	roomMessages      int64 // -1: no message limit
	paged             int64 // messages that land while it pages: one record each
	records           int64 // estimated heap of their records
	heapRoom          int64 // heap max - used - what lands in memory
	roomWhy           string
}

// targetHeapHoldsPaging compares the heap the selection's page-transaction records would take
// on the target with the heap the target has. The relay stamps every message with a duplicate
// id, and Artemis keeps a record in memory for each such message that lands while its address
// pages, until it is consumed: a large enough selection exhausts the target's heap.
// It refuses when even the whole heap could not hold the records and nothing consumes from the
// target queue (the run could only exhaust the heap or wait for its time to run out); otherwise
// it warns.
func targetHeapHoldsPaging(f Facts) []Finding {
	q, m := f.TargetQueue, f.TargetMemory
	if q == nil || m == nil || m.Heap.Max <= 0 || f.SelectionCount <= 0 {
		return nil
	}
	if p := f.TargetSettings.AddressFullPolicy; p != "" && !strings.EqualFold(p, "PAGE") {
		return nil // BLOCK and FAIL wait instead of paging; DROP is refused
	}
	e, ok := estimatePaging(f)
	if !ok || e.records <= e.heapRoom {
		return nil
	}
	atLeast := ""
	if f.SelectionCountCapped {
		atLeast = "at least "
	}
	figures := fmt.Sprintf("%s%d selected message(s), about %s (%s a message on the source), go to address %q of "+
		"target queue %q on broker %q, which takes %s before it pages (%s). An estimated %s%d of them would land "+
		"while it pages, and Artemis keeps a page-transaction record on the heap for each message with a duplicate "+
		"id (the relay sets one on every message) until it is consumed, and loads them again when it restarts: "+
		"an estimated %s (%d bytes a record, an estimate from a measurement on Artemis 2.40). Broker %q's heap has "+
		"a max of %s with %s used now (%d%%, collectable objects included), leaving about %s once the messages "+
		"that fit in memory are there.",
		atLeast, e.count, mib(e.bytes), bytesOf(e.avg), q.Address, q.Name, f.Target.Broker, mib(e.roomBytes), e.roomWhy,
		atLeast, e.paged, mib(e.records), PageRecordHeapBytes, f.Target.Broker, mib(m.Heap.Max), mib(m.Heap.Used),
		m.Heap.Percent(), mib(e.heapRoom))
	remedy := fmt.Sprintf("Raise broker %q's heap (-Xmx in etc/artemis.profile) to at least %s, raise max-size-bytes "+
		"of address %q and the broker's global-max-size, which bounds every address, so that the selection fits "+
		"without paging (%s more), let consumers drain queue %q while "+
		"the transfer runs, or transfer in parts (a filter or message_ids).",
		f.Target.Broker, mib(m.Heap.Used+e.records+min(e.bytes, e.roomBytes)), q.Address, mib(max(e.bytes-e.roomBytes, 0)), q.Name)
	if e.records > m.Heap.Max && q.ConsumerCount == 0 {
		return []Finding{refuse("target.queue", summaryHeapTooSmall,
			"%s The records alone exceed the whole heap, and queue %q has no consumer to free them, so the run "+
				"could not finish: it would exhaust the target's heap, or wait paused until its time runs out. "+
				"Nothing was transferred. %s", figures, q.Name, remedy)}
	}
	return []Finding{warn("target.queue", summaryHeapTight,
		"%s While the address pages and the heap is nearly full the relay pauses and says so, and goes on once "+
			"consumers drain the queue; apply takes as long as that takes and stops, resumable, when its time runs "+
			"out. %s", figures, remedy)}
}

// estimatePaging works out pagingEstimate; false when the address never pages.
func estimatePaging(f Facts) (pagingEstimate, bool) {
	s, u, m := f.TargetSettings, f.TargetUsage, f.TargetMemory
	e := pagingEstimate{count: f.SelectionCount, roomMessages: -1}
	if sq := f.SourceQueue; sq != nil && sq.MessageCount > 0 && sq.PersistentSize > 0 {
		e.avg = max(sq.PersistentSize/sq.MessageCount, 1)
	}
	e.bytes = e.count * e.avg
	var why []string
	limited := false
	e.roomBytes = -1
	if s.MaxSizeBytes > 0 {
		limited = true
		used := s.MaxSizeBytes // unknown usage: taken as full
		if u != nil {
			used = u.SizeBytes
		}
		e.roomBytes = max(s.MaxSizeBytes-used, 0)
		why = append(why, fmt.Sprintf("max-size-bytes %s, %s in memory now", mib(s.MaxSizeBytes), mib(used)))
	}
	if g := m.Global; g.MaxSize > 0 {
		room := max(g.MaxSize-g.Used, 0)
		if !limited || room < e.roomBytes {
			e.roomBytes = room
		}
		limited = true
		why = append(why, fmt.Sprintf("the broker's global-max-size %s, %s of it in use", mib(g.MaxSize), mib(g.Used)))
	}
	if s.MaxSizeMessages > 0 {
		limited = true
		held := s.MaxSizeMessages
		if u != nil {
			held = u.Messages
		}
		e.roomMessages = max(s.MaxSizeMessages-held, 0)
		why = append(why, fmt.Sprintf("max-size-messages %d, %d held now", s.MaxSizeMessages, held))
	}
	if !limited {
		return e, false
	}
	if u != nil && u.Paging {
		e.roomBytes, e.roomMessages = 0, 0
		why = append(why, "it pages already")
	}
	if e.roomBytes < 0 {
		e.roomBytes = e.bytes // only a message limit applies
	}
	fit := e.count // unknown message size: taken as none fitting, below
	if e.avg > 0 {
		fit = min(fit, e.roomBytes/e.avg)
	} else {
		fit = 0
	}
	if e.roomMessages >= 0 {
		fit = min(fit, e.roomMessages)
	}
	e.paged = e.count - fit
	if e.paged <= 0 {
		return e, false
	}
	e.records = e.paged * PageRecordHeapBytes
	e.heapRoom = max(m.Heap.Max-m.Heap.Used-min(e.bytes, e.roomBytes), 0)
	e.roomWhy = strings.Join(why, "; ")
	return e, true
}

// mib says a byte count in MiB, or in bytes when it is small.
func mib(n int64) string {
	if n < 1<<20 {
		return bytesOf(n)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func bytesOf(n int64) string { return fmt.Sprintf("%d bytes", n) }
