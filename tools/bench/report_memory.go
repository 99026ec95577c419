package bench

import (
	"fmt"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// memoryMedians are the medians, in MiB, of what the correct runs of one contender recorded of
// their memory; n is how many runs recorded it, nHeld how many the heap's part.
type memoryMedians struct {
	peak, rss, anon, file, start, live, receive, decoded, send float64
	n, nHeld                                                   int
}

// medianMemory takes the medians of contender's correct runs that recorded their memory.
func medianMemory(runs []Trial, contender string) memoryMedians {
	var peak, rss, anon, file, start, live, receive, decoded, send []float64
	mib := func(kib int64) float64 { return float64(kib) / 1024 }
	for _, r := range runs {
		m := r.Process.Memory
		if r.Contender != contender || !r.OK || m == nil {
			continue
		}
		peak = append(peak, mib(r.Process.PeakRSSKiB))
		rss, anon, file = append(rss, mib(m.RSSKiB)), append(anon, mib(m.AnonKiB)), append(file, mib(m.FileKiB))
		if m.StartKiB > 0 {
			start = append(start, mib(m.StartKiB))
		}
		if m.HeapLiveKiB > 0 {
			live = append(live, mib(m.HeapLiveKiB))
		}
		if h := m.Held; h != nil {
			receive, decoded, send = append(receive, mib(h.ReceiveKiB)), append(decoded, mib(h.DecodedKiB)), append(send, mib(h.SendKiB))
		}
	}
	return memoryMedians{peak: Median(peak), rss: Median(rss), anon: Median(anon), file: Median(file), start: Median(start),
		live: Median(live), receive: Median(receive), decoded: Median(decoded), send: Median(send), n: len(peak), nHeld: len(receive)}
}

// writeLargeMemory shows where the memory of our move of 20 x 10 MiB went, beside the goal of
// max_in_flight_bytes + goalLargeRSSOver.
func writeLargeMemory(b *strings.Builder, res *Results) {
	lc := caseOf(res.Cases, 20, 10*mib)
	if lc == nil {
		return
	}
	engine, provider := medianMemory(lc.Runs, ContenderOurs), medianMemory(lc.Runs, ContenderApply)
	if engine.n == 0 && provider.n == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	inFlight := res.RelayTuning.MaxInFlightBytes
	if inFlight <= 0 {
		inFlight = transfer.DefaultMaxInFlightBytes
	}
	bound := float64(inFlight)/float64(mib) + goalLargeRSSOver
	p("### Memory of our move of %s\n\n", lc.Name)
	p("The process that relays, at its highest resident set read (the engine's child reads its own every %s, the provider's is read every 100 ms): the executable's own pages (file-backed: code and read-only data) and anonymous memory (the Go heap, stacks, the runtime). The engine's child also records the most its Go heap held live after a collection, and which of that were go-amqp's copies of the messages, from the Go heap profile at each collection (at the collection where they came to the most). Medians of the correct runs, in MiB; the goal is %.0f MiB (max_in_flight_bytes + %.0f MiB). The relay holds one 10 MiB message at a time: its byte credit invites the next only when the last is settled.\n\n", ownMemoryPoll, bound, goalLargeRSSOver)
	cell := func(v float64, n int) string {
		if n == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f", v)
	}
	p("| | engine (relay child) | provider (terraform apply) |\n|---|---:|---:|\n")
	rows := []struct {
		label      string
		eng, prov  float64
		engN, proN int
	}{
		{"peak RSS (VmHWM)", engine.peak, provider.peak, engine.n, provider.n},
		{"highest resident set read", engine.rss, provider.rss, engine.n, provider.n},
		{"of it, the executable's pages (file-backed)", engine.file, provider.file, engine.n, provider.n},
		{"of it, anonymous (heap, stacks, runtime)", engine.anon, provider.anon, engine.n, provider.n},
		{"resident before the run (process started, nothing connected)", engine.start, 0, engine.n, 0},
		{"Go heap live at most, after a collection", engine.live, 0, engine.n, 0},
		{"go-amqp: the receiver's buffer a message's frames are put together in", engine.receive, 0, engine.nHeld, 0},
		{"go-amqp: the message decoded from it (the body copied out)", engine.decoded, 0, engine.nHeld, 0},
		{"go-amqp: the sender's encoding of the message and the frames cut from it", engine.send, 0, engine.nHeld, 0},
	}
	for _, r := range rows {
		p("| %s | %s | %s |\n", r.label, cell(r.eng, r.engN), cell(r.prov, r.proN))
	}
	p("\n")
	for _, l := range largeMemoryFindings(engine, provider, bound, float64(lc.Size)/float64(mib)) {
		p("- %s\n", l)
	}
	p("\n")
}

// largeMemoryFindings says what the medians show: how many times over go-amqp holds a message,
// what else the process holds, and what the goal would need.
func largeMemoryFindings(engine, provider memoryMedians, bound, msgMiB float64) []string {
	var lines []string
	if engine.nHeld > 0 {
		held := engine.receive + engine.decoded + engine.send
		lines = append(lines, fmt.Sprintf("**go-amqp holds a %.0f MiB message %.1f times over** (%.1f MiB): the receiver puts its frames together in one buffer, decodes a copy of the body out of it, and the sender encodes that into a buffer of its own before it cuts it into frames; both buffers keep their size between messages. That is %.0f%% of the most the heap held live (%.1f MiB); the relay's own state is the rest. go-amqp's API takes and gives whole messages, so a relay on it cannot pass a message's frames on as they arrive.",
			msgMiB, held/msgMiB, held, 100*held/max(engine.live, 1), engine.live))
	}
	if engine.n > 0 {
		lines = append(lines, fmt.Sprintf("**The engine's child** peaked at %.1f MiB: %.1f MiB of its executable's pages, %.1f MiB anonymous, of which the heap's copies above; it was %.1f MiB resident before it connected. Anonymous memory above what the heap holds live is the garbage between collections under the soft memory limit (%d MiB: max_in_flight_bytes + %d MiB).",
			engine.peak, engine.file, engine.anon, engine.start, transfer.MemoryLimit(0)>>20, transfer.MemoryHeadroom>>20))
	}
	if engine.n > 0 && provider.n > 0 {
		lines = append(lines, fmt.Sprintf("**The provider** peaked at %.1f MiB. Its anonymous memory (%.1f MiB) is the engine child's within %.1f MiB; it is larger by its executable's pages (%.1f MiB against %.1f: the plugin framework, gRPC and pgx besides the engine).",
			provider.peak, provider.anon, abs(provider.anon-engine.anon), provider.file, engine.file))
	}
	if engine.nHeld > 0 && provider.n > 0 && provider.peak > bound {
		held := engine.receive + engine.decoded + engine.send
		lines = append(lines, fmt.Sprintf("**What the goal would need.** Within %.0f MiB, the provider has %.1f MiB for everything but its executable's pages; go-amqp's copies of one message take %.1f of it. To meet the goal, the relay would have to hold a large message fewer times over (a client that streams a message's frames from the source to the target instead of decoding and encoding it whole), or the provider's executable would have to shrink by %.1f MiB of resident pages.",
			bound, bound-provider.file, held, provider.peak-bound))
	}
	return lines
}

func abs(v float64) float64 { return max(v, -v) }
