package bench

import (
	"encoding/json"
	"fmt"
)

// perfSample is one element of the report `artemis perf producer|consumer --json` writes: an
// "interval" sample about every second, then one "summary".
type perfSample struct {
	SampleType    string `json:"sampleType"`
	Warmup        bool   `json:"warmup"`
	Time          int64  `json:"time"` // ms since the epoch, at the end of the interval
	Completed     int64  `json:"completed"`
	Received      int64  `json:"received"`
	TotalComplete int64  `json:"totalCompleted"`
	TotalReceived int64  `json:"totalReceived"`
	Result        string `json:"result"`
}

// PerfRate is what one `artemis perf` run achieved.
type PerfRate struct {
	MsgsPerSec float64 `json:"msgs_per_s"`
	Total      int64   `json:"total"`   // messages produced (acknowledged by the broker) or consumed
	Seconds    float64 `json:"seconds"` // the span the rate is taken over
}

// ParsePerfReport reads an `artemis perf` JSON report and returns the steady rate: the first
// skip intervals (the JIT warm-up of client and broker) are left out, and the messages after
// the last interval sample count up to the summary's time. A run too short for that leaves out
// fewer, keeping at least two intervals; with fewer than that the rate is over the whole run,
// from one interval before the first sample.
func ParsePerfReport(raw []byte, skip int) (PerfRate, error) {
	var samples []perfSample
	if err := json.Unmarshal(raw, &samples); err != nil {
		return PerfRate{}, fmt.Errorf("reading an artemis perf report: %w", err)
	}
	var intervals []perfSample
	var summary *perfSample
	for i := range samples {
		switch samples[i].SampleType {
		case "interval":
			if !samples[i].Warmup {
				intervals = append(intervals, samples[i])
			}
		case "summary":
			summary = &samples[i]
		}
	}
	if summary == nil {
		return PerfRate{}, fmt.Errorf("the artemis perf report has no summary (%d samples)", len(samples))
	}
	if summary.Result != "" && summary.Result != "success" {
		return PerfRate{}, fmt.Errorf("artemis perf reports %q", summary.Result)
	}
	count := func(s perfSample) int64 { return s.Completed + s.Received }
	total := summary.TotalComplete + summary.TotalReceived
	if len(intervals) == 0 {
		return PerfRate{}, fmt.Errorf("the artemis perf report has no interval samples (total %d)", total)
	}
	var inIntervals int64
	for _, s := range intervals {
		inIntervals += count(s)
	}
	// The last interval is not listed: what the summary counts beyond the listed intervals
	// moved between the last sample and the summary.
	tail := max(total-inIntervals, 0)
	if skip > len(intervals)-2 {
		// A short run: leave out as many as possible, keeping two intervals to measure.
		skip = max(len(intervals)-2, 0)
	}
	// Without skipping, the first interval is taken to start one report period (a second)
	// before its sample; otherwise the span starts at the end of the last skipped interval.
	start := intervals[0].Time - 1000
	n := tail
	if skip > 0 {
		start = intervals[skip-1].Time
	}
	for _, s := range intervals[skip:] {
		n += count(s)
	}
	span := float64(summary.Time-start) / 1000
	if span <= 0 || n <= 0 {
		return PerfRate{}, fmt.Errorf("the artemis perf report spans %.3fs with %d messages", span, n)
	}
	return PerfRate{MsgsPerSec: float64(n) / span, Total: total, Seconds: span}, nil
}
