package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MigrationLayout is the source broker of the whole-broker migration benchmark: how many queues
// and how deep each is. Real brokers have a long tail of queue depths (most queues short, some
// empty, a few very deep) and a few queues of large messages; the layout draws such a broker
// from a seed, so that every contender moves the same one and a later run the same again.
type MigrationLayout struct {
	Seed   uint64 `json:"seed"`
	Queues int    `json:"queues"`
	// Size is the body size of the messages of every queue but the large ones.
	Size int `json:"size"`
	// Deep queues hold DeepCount messages each, Mid queues MidCount each: the tail.
	Deep      int `json:"deep"`
	DeepCount int `json:"deep_count"`
	Mid       int `json:"mid"`
	MidCount  int `json:"mid_count"`
	// Large queues hold LargeCount messages of LargeSize bytes (above Artemis's 100 KiB
	// min-large-message-size: large messages in the broker's store).
	Large      int `json:"large"`
	LargeCount int `json:"large_count"`
	LargeSize  int `json:"large_size"`
	// EmptyPercent of the other queues are empty; the rest hold between 1 and ShortMax
	// messages, log-uniformly (as many queues of 1-9 as of 10-99 and of 100-999).
	EmptyPercent int `json:"empty_percent"`
	ShortMax     int `json:"short_max"`
}

// DefaultMigrationLayout is the published layout: 200 queues, 3 of 100,000 x 1 KiB, 4 of
// 10,000, 3 of 5 x 1 MiB, a fifth of the rest empty and the others under 1,000.
func DefaultMigrationLayout() MigrationLayout {
	return MigrationLayout{Seed: 25, Queues: 200, Size: kib, Deep: 3, DeepCount: 100_000, Mid: 4, MidCount: 10_000,
		Large: 3, LargeCount: 5, LargeSize: mib, EmptyPercent: 20, ShortMax: 999}
}

// MigrationQueue is one queue of a layout: its place (its name's number) and what it holds.
type MigrationQueue struct {
	Index int `json:"index"`
	Count int `json:"count"`
	Size  int `json:"size"`
}

// Bytes is the queue's payload volume.
func (q MigrationQueue) Bytes() int64 { return int64(q.Count) * int64(q.Size) }

// Validate says why a layout cannot be drawn.
func (l MigrationLayout) Validate() error {
	switch {
	case l.Queues < 1:
		return fmt.Errorf("a migration layout of %d queues", l.Queues)
	case l.Deep < 0 || l.Mid < 0 || l.Large < 0 || l.Deep+l.Mid+l.Large > l.Queues:
		return fmt.Errorf("%d deep, %d mid and %d large queues do not fit in %d", l.Deep, l.Mid, l.Large, l.Queues)
	case l.Size < 1 || l.LargeSize < 1 || l.ShortMax < 1:
		return fmt.Errorf("message sizes %d and %d and short depth %d must be positive", l.Size, l.LargeSize, l.ShortMax)
	case l.EmptyPercent < 0 || l.EmptyPercent > 100:
		return fmt.Errorf("empty percent %d", l.EmptyPercent)
	}
	return nil
}

// Draw lays the queues out: the same seed gives the same queues. Which places hold the deep,
// mid and large queues is drawn too, so that they are spread among the short ones, as on a
// broker whose queues are named by application rather than by depth.
func (l MigrationLayout) Draw() []MigrationQueue {
	r := rand.New(rand.NewPCG(l.Seed, l.Seed^0x6d696772617465)) //nolint:gosec // a reproducible layout, not a secret
	order := r.Perm(l.Queues)
	queues := make([]MigrationQueue, l.Queues)
	for rank, i := range order {
		q := MigrationQueue{Index: i, Size: l.Size}
		switch {
		case rank < l.Deep:
			q.Count = l.DeepCount
		case rank < l.Deep+l.Mid:
			q.Count = l.MidCount
		case rank < l.Deep+l.Mid+l.Large:
			q.Count, q.Size = l.LargeCount, l.LargeSize
		case r.IntN(100) < l.EmptyPercent:
			q.Count = 0
		default:
			// Log-uniform over [1, ShortMax]: exp of a uniform draw over [0, ln(ShortMax+1)).
			q.Count = min(l.ShortMax, max(1, int(math.Exp(r.Float64()*math.Log(float64(l.ShortMax+1))))))
		}
		queues[i] = q
	}
	return queues
}

// MigrationTotals sum a layout's queues.
type MigrationTotals struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	Empty    int   `json:"empty"`
	// Short are the queues holding 1 to 999 messages, the large-message queues left out.
	Short int `json:"short"`
	// LargeMessages are the messages above Artemis's default min-large-message-size (100 KiB).
	LargeMessages int `json:"large_messages"`
	Deepest       int `json:"deepest"`
}

// artemisLargeMessageSize is Artemis's default min-large-message-size: bodies above it are
// stored as large messages, in files of their own.
const artemisLargeMessageSize = 100 * kib

// SumMigration totals queues.
func SumMigration(queues []MigrationQueue) MigrationTotals {
	var t MigrationTotals
	for _, q := range queues {
		t.Messages += int64(q.Count)
		t.Bytes += q.Bytes()
		switch {
		case q.Size > artemisLargeMessageSize:
			t.LargeMessages += q.Count
		case q.Count == 0:
			t.Empty++
		case q.Count < 1000:
			t.Short++
		}
		t.Deepest = max(t.Deepest, q.Count)
	}
	return t
}
