package bench

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// ApplyPhases are where a migration apply's time went, read from terraform's output as it was
// written (each line timed on arrival): terraform prints no times of its own but each
// resource's duration.
type ApplyPhases struct {
	// PlanSeconds is from the start until the first resource was created: terraform's start,
	// the provider's and the plan (the source's queues were read before, by step one).
	PlanSeconds float64 `json:"plan_s"`
	// ObjectsSeconds is when the last target address, address setting or queue was created.
	ObjectsSeconds float64 `json:"objects_s"`
	// FirstMoveSeconds and LastMoveSeconds are when the first queue move started and the last
	// one completed.
	FirstMoveSeconds float64 `json:"first_move_s"`
	LastMoveSeconds  float64 `json:"last_move_s"`
	// Moves are the artemis_queue_transfer resources completed; MoveMedian, MoveMax and MoveSum
	// their durations as terraform reports them (whole seconds).
	Moves      int     `json:"moves"`
	MoveMedian float64 `json:"move_median_s"`
	MoveMax    float64 `json:"move_max_s"`
	MoveSum    float64 `json:"move_sum_s"`
	// Objects are the other resources created (addresses, settings, queues).
	Objects int `json:"objects"`
	// ProviderCPU is the CPU time of the provider processes (polled from /proc every 200 ms):
	// the rest of the apply's client CPU is terraform's.
	ProviderCPU float64 `json:"provider_cpu_s"`
}

// timedLine is one line of terraform's output and when it arrived, since the apply started.
type timedLine struct {
	at   float64
	text string
}

// outputClock is an io.Writer that keeps the lines of terraform's output that mark a
// resource's start or end, each with the time it arrived.
type outputClock struct {
	start time.Time
	mu    sync.Mutex
	part  []byte
	lines []timedLine
}

func newOutputClock() *outputClock { return &outputClock{start: time.Now()} }

// Write keeps the complete marking lines of p.
func (c *outputClock) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := time.Since(c.start).Seconds()
	c.part = append(c.part, p...)
	for {
		i := bytes.IndexByte(c.part, '\n')
		if i < 0 {
			break
		}
		line := string(c.part[:i])
		c.part = c.part[i+1:]
		if strings.Contains(line, ": Creating...") || strings.Contains(line, ": Creation complete after ") {
			c.lines = append(c.lines, timedLine{at: at, text: line})
		}
	}
	return len(p), nil
}

// Phases reads the phases from the lines kept so far.
func (c *outputClock) Phases() *ApplyPhases {
	c.mu.Lock()
	defer c.mu.Unlock()
	return applyPhases(c.lines)
}

var creationComplete = regexp.MustCompile(`: Creation complete after ((?:\d+h)?(?:\d+m)?\d+s)`)

// applyPhases reads the phases from timed lines of terraform's output; nil when no resource
// was created.
func applyPhases(lines []timedLine) *ApplyPhases {
	var ph ApplyPhases
	var moves []float64
	first := true
	for _, l := range lines {
		move := strings.HasPrefix(l.text, "artemis_queue_transfer.")
		if strings.HasSuffix(l.text, ": Creating...") {
			if first {
				ph.PlanSeconds, first = l.at, false
			}
			if move && ph.FirstMoveSeconds == 0 {
				ph.FirstMoveSeconds = l.at
			}
			continue
		}
		m := creationComplete.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		if !move {
			ph.Objects++
			ph.ObjectsSeconds = max(ph.ObjectsSeconds, l.at)
			continue
		}
		d, err := time.ParseDuration(m[1])
		if err != nil {
			continue
		}
		moves = append(moves, d.Seconds())
		ph.LastMoveSeconds = max(ph.LastMoveSeconds, l.at)
	}
	if first {
		return nil
	}
	sort.Float64s(moves)
	ph.Moves, ph.MoveMedian = len(moves), Median(moves)
	for _, d := range moves {
		ph.MoveSum += d
		ph.MoveMax = max(ph.MoveMax, d)
	}
	return &ph
}
