package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// DepthStore is the target's store as its queue deepens: n x 1 KiB stored by our relay's
// sender in slices, once with a duplicate id per message (as the relay sends) and once without,
// each slice's target broker CPU read on its own. A million-message move slows as its target
// fills; this shows whether the duplicate id, the paging, or both are why.
type DepthStore struct {
	Count  int          `json:"count"`
	Slice  int          `json:"slice"`
	Slices []DepthSlice `json:"slices"`
	Error  string       `json:"error,omitempty"`
}

// DepthSlice is one slice of a DepthStore.
type DepthSlice struct {
	DupID       bool    `json:"dup_id"`
	StoredFirst int     `json:"stored_before"` // messages on the queue when the slice began
	Messages    int     `json:"messages"`
	WallSeconds float64 `json:"wall_s"`
	CPUSeconds  float64 `json:"cpu_s"`  // the target broker's CPU during the slice
	IdleSeconds float64 `json:"idle_s"` // its idle rate times the slice's wall time
	Paging      bool    `json:"paging"` // the target address paged at the slice's end
}

// MicrosPerMessage is the slice's target CPU per message, idle left out.
func (s DepthSlice) MicrosPerMessage() float64 {
	if s.Messages <= 0 {
		return 0
	}
	return max(0, s.CPUSeconds-s.IdleSeconds) * 1e6 / float64(s.Messages)
}

// depthSlices is how many slices a DepthStore's count is stored in.
const depthSlices = 10

// measureDepth stores n x 1 KiB on a fresh target queue twice, with and without duplicate ids,
// in depthSlices slices each. idlePerSec is the target's CPU at rest (from the breakdown; 0
// when it did not run).
func (b *bench) measureDepth(ctx context.Context, n int, idlePerSec float64) *DepthStore {
	d := &DepthStore{Count: n, Slice: max(n/depthSlices, 1)}
	for _, dup := range []bool{true, false} {
		if err := b.storeByDepth(ctx, d, dup, idlePerSec); err != nil {
			d.Error = err.Error()
			return d
		}
	}
	return d
}

func (b *bench) storeByDepth(ctx context.Context, d *DepthStore, dup bool, idlePerSec float64) error {
	tag := b.uniqueTag(fmt.Sprintf("depth-%t-", dup))
	q := "bench." + tag + ".tgt"
	if err := b.tgtAdmin.CreateQueue(ctx, runQueue(q), false); err != nil {
		return err
	}
	defer b.dropQueues(ctx, "", q)
	inFlight := min(2*transfer.DefaultBatchSize, artemis.MaxCredit) // the relay's sender
	for stored := 0; stored < d.Count; stored += d.Slice {
		prefix := ""
		if dup {
			prefix = "studio:bench-" + tag + ":" + strconv.Itoa(stored) + ":" // each slice's ids its own
		}
		s := DepthSlice{DupID: dup, StoredFirst: stored, Messages: min(d.Slice, d.Count-stored)}
		cpu0, _ := ProcessCPU(b.targetPID)
		start := time.Now()
		if err := harness.SendNumbered(ctx, b.tgtAdmin, q, s.Messages, kib, inFlight, tag, prefix); err != nil {
			return fmt.Errorf("storing %d messages after %d (duplicate id %t): %w", s.Messages, stored, dup, err)
		}
		s.WallSeconds = time.Since(start).Seconds()
		cpu1, _ := ProcessCPU(b.targetPID)
		s.CPUSeconds, s.IdleSeconds = (cpu1 - cpu0).Seconds(), idlePerSec*s.WallSeconds
		if u, err := b.tgtAdmin.AddressUsage(ctx, q); err == nil {
			s.Paging = u.Paging
		}
		d.Slices = append(d.Slices, s)
		b.logf("depth: %s stored after %s, duplicate id %t: %.0f µs/msg of target CPU, %.0f msg/s, paging %t",
			groupThousands(int64(s.Messages)), groupThousands(int64(stored)), dup, s.MicrosPerMessage(), float64(s.Messages)/s.WallSeconds, s.Paging)
	}
	if got, err := b.tgtAdmin.Queue(ctx, q); err != nil {
		return fmt.Errorf("counting the depth queue: %w", err)
	} else if got.MessageCount != int64(d.Count) {
		return fmt.Errorf("the depth queue holds %d messages, want %d", got.MessageCount, d.Count)
	}
	return nil
}

// writeDepth shows the target's store slice by slice, with and without duplicate ids.
func writeDepth(b *strings.Builder, res *Results) {
	d := res.Depth
	if d == nil || len(d.Slices) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### The target's store as its queue deepens (%s x 1 KiB, in slices of %s)\n\n", groupThousands(int64(d.Count)), groupThousands(int64(d.Slice)))
	p("Our relay's sender (go-amqp, %d in flight, each message confirmed on its own) stored %s messages on a fresh target queue in slices, once with `_AMQ_DUPL_ID` on each (as the relay sends) and once without; the target broker's CPU per slice, less its CPU at rest (as the breakdown read it; none when the breakdown did not run). Paging: whether the target address paged at the slice's end.\n\n",
		min(2*transfer.DefaultBatchSize, artemis.MaxCredit), groupThousands(int64(d.Count)))
	if d.Error != "" {
		p("This measurement failed: %s\n\n", oneLine(d.Error))
	}
	byFirst := map[int]map[bool]DepthSlice{}
	var firsts []int
	for _, s := range d.Slices {
		if byFirst[s.StoredFirst] == nil {
			byFirst[s.StoredFirst] = map[bool]DepthSlice{}
			firsts = append(firsts, s.StoredFirst)
		}
		byFirst[s.StoredFirst][s.DupID] = s
	}
	cell := func(s DepthSlice, ok bool) string {
		if !ok {
			return "– | – | –"
		}
		paging := "no"
		if s.Paging {
			paging = "yes"
		}
		return fmt.Sprintf("%.0f | %s | %s", s.MicrosPerMessage(), num(float64(s.Messages)/s.WallSeconds), paging)
	}
	p("| stored before | with id: µs/msg | msg/s | paging | without id: µs/msg | msg/s | paging |\n|---:|---:|---:|---|---:|---:|---|\n")
	for _, first := range firsts {
		with, okW := byFirst[first][true]
		without, okWo := byFirst[first][false]
		p("| %s | %s | %s |\n", groupThousands(int64(first)), cell(with, okW), cell(without, okWo))
	}
	p("\n")
	if line := depthSummary(d.Slices); line != "" {
		p("%s\n\n", line)
	}
}

// depthSummary sets the mean cost of the slices that did not page beside those that did, with
// and without the duplicate id.
func depthSummary(slices []DepthSlice) string {
	type acc struct{ cpu, n float64 }
	var sums [2][2]acc // [dup][paging]
	for _, s := range slices {
		i, j := 0, 0
		if s.DupID {
			i = 1
		}
		if s.Paging {
			j = 1
		}
		sums[i][j].cpu += max(0, s.CPUSeconds-s.IdleSeconds)
		sums[i][j].n += float64(s.Messages)
	}
	mean := func(a acc) string {
		if a.n == 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f", a.cpu*1e6/a.n)
	}
	if sums[1][1].n == 0 && sums[0][1].n == 0 {
		return "The target address never paged in this measurement."
	}
	return fmt.Sprintf("Mean target CPU per message: with the duplicate id %s µs before the address paged and %s while it paged; without it %s and %s.",
		mean(sums[1][0]), mean(sums[1][1]), mean(sums[0][0]), mean(sums[0][1]))
}
