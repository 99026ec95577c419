package bench

import (
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// Results are everything one benchmark run measured; bench/results.json holds them and the
// chart and BENCHMARKS.md are drawn from them.
type Results struct {
	Profile  Profile   `json:"profile"`
	Machine  Machine   `json:"machine"`
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	Complete bool      `json:"complete"` // false: stopped early (see Error); what ran is kept
	Error    string    `json:"error,omitempty"`

	// Brokers says how the brokers were created: "synced" (artemis create's defaults) or
	// "fast" (--no-autotune --nio --no-fsync); empty in results written before it was recorded.
	Brokers string `json:"brokers,omitempty"`
	// BaselineRev is the earlier revision whose provider ran as ours-apply-baseline; empty when
	// none did.
	BaselineRev string `json:"baseline_rev,omitempty"`
	// WarmupSourceMicros is the source broker's CPU per message of each warm-up move of ours.
	WarmupSourceMicros []float64   `json:"warmup_source_us_per_msg,omitempty"`
	RelayUser          string      `json:"relay_user"`
	RelayTuning        RelayTuning `json:"relay_tuning"`
	// TransferDefaultCommit is the default commit interval `artemis help transfer` states.
	TransferDefaultCommit int         `json:"transfer_default_commit"`
	Contenders            []Contender `json:"contenders"`
	// CommandLines shows one command line of each artemis command used, password hidden.
	CommandLines map[string]string `json:"command_lines"`
	Limits       []Limit           `json:"limits"`
	Cases        []CaseResult      `json:"cases"`
	// Breakdown is the parts of a move measured on their own (nil: not measured).
	Breakdown *Breakdown `json:"breakdown,omitempty"`
	// Depth is the target's store as its queue deepens (nil: not measured).
	Depth *DepthStore `json:"depth,omitempty"`
	// Resume is the killed-and-resumed runs (nil: not measured).
	Resume *ResumeResult `json:"resume,omitempty"`
	// Scale is the scale curve (nil: not measured).
	Scale   *ScaleCurve `json:"scale,omitempty"`
	Targets []Target    `json:"targets"`
}

// Limit is the brokers' raw rate for one message size over one protocol: how fast the target
// takes durable messages (`artemis perf producer`) and how fast the source gives them up
// (`artemis perf consumer`). A move can go no faster than the slower of the two.
type Limit struct {
	Size          int        `json:"size"`
	Protocol      string     `json:"protocol"`
	ProduceTarget []PerfRate `json:"produce_target"`
	ConsumeSource []PerfRate `json:"consume_source"`
	// Medians, in messages per second.
	ProduceTargetMsgs float64  `json:"produce_target_msgs_per_s"`
	ConsumeSourceMsgs float64  `json:"consume_source_msgs_per_s"`
	MsgsPerSec        float64  `json:"msgs_per_s"` // the lower of the two medians
	Errors            []string `json:"errors,omitempty"`
}

// CaseResult is one case: every run, and the medians.
type CaseResult struct {
	Case
	Name string `json:"name"`
	// PreflightSeconds are the wall times of Engine.Preflight (fresh clients each, as a plan
	// has) against the case's filled source queue.
	PreflightSeconds []float64 `json:"preflight_s"`
	PreflightMedian  float64   `json:"preflight_median_s"`
	PreflightError   string    `json:"preflight_error,omitempty"`
	// Limit is the best protocol's limit for the case's message size.
	Limit    float64            `json:"limit_msgs_per_s"`
	LimitVia string             `json:"limit_protocol,omitempty"`
	Runs     []Trial            `json:"runs"`
	Summary  []ContenderSummary `json:"summary"`
	Ratios   Ratios             `json:"ratios"`
	Notes    []string           `json:"notes,omitempty"`
	// OursOnly marks a memory case (Profile.MemoryCases): our relay alone, once.
	OursOnly bool `json:"ours_only,omitempty"`
}

// Trial is one contender moving one freshly filled copy of a case.
type Trial struct {
	Contender string             `json:"contender"`
	Rep       int                `json:"rep"`
	OK        bool               `json:"ok"`
	Error     string             `json:"error,omitempty"`
	Fill      harness.FillResult `json:"fill"`
	Process   ProcessRun         `json:"process"`
	Relay     *RelayTimes        `json:"relay,omitempty"` // ours only
	Waits     []string           `json:"waits,omitempty"`
	// Requests are the management requests our engine's run sent (the relay child only).
	Requests    *ManagementRequests `json:"management_requests,omitempty"`
	MsgsPerSec  float64             `json:"msgs_per_s"` // count over the end-to-end wall time
	MiBPerSec   float64             `json:"mib_per_s"`
	SourceCPU   float64             `json:"source_cpu_s"` // the source broker JVM's CPU seconds during the run
	TargetCPU   float64             `json:"target_cpu_s"`
	Check       Check               `json:"check"`
	CommandLine string              `json:"command_line,omitempty"`
	// Samples are where the messages were every sampleEvery, for moves of sampleFrom or more.
	Samples []Sample `json:"samples,omitempty"`
}

// ContenderSummary are a contender's medians over its correct runs of one case.
type ContenderSummary struct {
	Contender  string  `json:"contender"`
	OKRuns     int     `json:"ok_runs"`
	Runs       int     `json:"runs"`
	MsgsPerSec float64 `json:"msgs_per_s"`
	MiBPerSec  float64 `json:"mib_per_s"`
	Wall       float64 `json:"wall_s"`
	Staging    float64 `json:"staging_s"` // ours only
	Relay      float64 `json:"relay_s"`   // ours only
	// Other is the rest of our wall time (ours only): process start, preflight, staging set-up
	// and clean-up.
	Other      float64 `json:"other_s"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	MaxRSSMiB  float64 `json:"max_peak_rss_mib"` // the highest of the runs
	ClientCPU  float64 `json:"client_cpu_s"`
	SourceCPU  float64 `json:"source_cpu_s"`
	TargetCPU  float64 `json:"target_cpu_s"`
	// SourceCPUPct and TargetCPUPct are the brokers' CPU as a percentage of one core over the
	// run's wall time.
	SourceCPUPct float64 `json:"source_cpu_pct"`
	TargetCPUPct float64 `json:"target_cpu_pct"`
}

// Ratios compare our median rate with the others of the same case; 0 when one side is missing.
type Ratios struct {
	VsTransferDefault float64 `json:"vs_transfer_default"` // artemis transfer, core, default commit
	VsBestTransfer    float64 `json:"vs_best_transfer"`
	BestTransfer      string  `json:"best_transfer,omitempty"`
	VsLimit           float64 `json:"vs_limit"`
	// CopyVsMove is our copy's median rate over our move's, on the same brokers and case.
	CopyVsMove float64 `json:"copy_vs_move,omitempty"`
}

// Target is one of the goals of issue #6 and whether this run met it.
type Target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	// Status is "met", "MISSED", "not measured" or "FAILED" (the runs it needs failed).
	Status string `json:"status"`
}

const (
	statusMet         = "met"
	statusMissed      = "MISSED"
	statusNotMeasured = "not measured"
	statusFailed      = "FAILED"
)

// Recompute derives the medians, ratios and targets from the runs again, as Run does: for a
// report rewritten from saved results.
func Recompute(res *Results) {
	for i := range res.Cases {
		finishCase(&res.Cases[i], res.Contenders)
	}
	res.Targets = append(evaluateTargets(res.Cases), syncedTargets(res)...)
}

// summarize computes a contender's medians over its correct runs.
func summarize(contender string, runs []Trial) ContenderSummary {
	s := ContenderSummary{Contender: contender}
	var rate, mibs, wall, staging, relay, other, rss, client, srcCPU, tgtCPU, srcPct, tgtPct []float64
	for _, r := range runs {
		if r.Contender != contender {
			continue
		}
		s.Runs++
		if !r.OK {
			continue
		}
		s.OKRuns++
		rate = append(rate, r.MsgsPerSec)
		mibs = append(mibs, r.MiBPerSec)
		wall = append(wall, r.Process.WallSeconds)
		if r.Relay != nil {
			staging = append(staging, r.Relay.Staging)
			relay = append(relay, r.Relay.Relay)
			other = append(other, r.Process.WallSeconds-r.Relay.Active)
		}
		m := float64(r.Process.PeakRSSKiB) / 1024
		rss = append(rss, m)
		s.MaxRSSMiB = max(s.MaxRSSMiB, m)
		client = append(client, r.Process.CPUSeconds)
		srcCPU = append(srcCPU, r.SourceCPU)
		tgtCPU = append(tgtCPU, r.TargetCPU)
		if r.Process.WallSeconds > 0 {
			srcPct = append(srcPct, 100*r.SourceCPU/r.Process.WallSeconds)
			tgtPct = append(tgtPct, 100*r.TargetCPU/r.Process.WallSeconds)
		}
	}
	s.MsgsPerSec, s.MiBPerSec, s.Wall = Median(rate), Median(mibs), Median(wall)
	s.Staging, s.Relay, s.Other = Median(staging), Median(relay), Median(other)
	s.PeakRSSMiB, s.ClientCPU = Median(rss), Median(client)
	s.SourceCPU, s.TargetCPU, s.SourceCPUPct, s.TargetCPUPct = Median(srcCPU), Median(tgtCPU), Median(srcPct), Median(tgtPct)
	return s
}

// finishCase fills in a case's summaries and ratios from its runs.
func finishCase(cr *CaseResult, contenders []Contender) {
	cr.Summary = nil
	for _, c := range contenders {
		if (cr.OursOnly && c.ID != ContenderOurs) || !cr.Case.Runs(c.ID) {
			continue
		}
		cr.Summary = append(cr.Summary, summarize(c.ID, cr.Runs))
	}
	cr.PreflightMedian = Median(cr.PreflightSeconds)
	ours := cr.summary(ContenderOurs)
	cr.Ratios = Ratios{}
	if ours == nil || ours.OKRuns == 0 {
		return
	}
	if d := cr.summary(ContenderCoreDflt); d != nil && d.OKRuns > 0 {
		cr.Ratios.VsTransferDefault = ours.MsgsPerSec / d.MsgsPerSec
	}
	best := 0.0
	for _, c := range contenders {
		if c.Tool != ToolArtemisTransfer {
			continue
		}
		if s := cr.summary(c.ID); s != nil && s.OKRuns > 0 && s.MsgsPerSec > best {
			best, cr.Ratios.BestTransfer = s.MsgsPerSec, c.ID
		}
	}
	if best > 0 {
		cr.Ratios.VsBestTransfer = ours.MsgsPerSec / best
	}
	if cr.Limit > 0 {
		cr.Ratios.VsLimit = ours.MsgsPerSec / cr.Limit
	}
	if cp := cr.summary(ContenderCopy); cp != nil && cp.OKRuns > 0 {
		cr.Ratios.CopyVsMove = cp.MsgsPerSec / ours.MsgsPerSec
	}
}

func (cr *CaseResult) summary(id string) *ContenderSummary {
	for i := range cr.Summary {
		if cr.Summary[i].Contender == id {
			return &cr.Summary[i]
		}
	}
	return nil
}

// bestLimit picks, for a message size, the protocol whose limit is highest: what the brokers
// can do at best.
func bestLimit(limits []Limit, size int) (float64, string) {
	best, via := 0.0, ""
	for _, l := range limits {
		if l.Size == size && l.MsgsPerSec > best {
			best, via = l.MsgsPerSec, l.Protocol
		}
	}
	return best, via
}

// The goals of issue #6.
const (
	goalCase          = 100_000 // the case the throughput goals are stated for
	goalVsDefault     = 2.0     // at least twice artemis transfer with its default commit interval
	goalVsLimit       = 0.70    // at least 70% of the brokers' raw limit
	goalRSSMiB        = 64.0    // peak relay memory for 1 KiB messages, at every queue size
	goalPreflightSecs = 2.0
	// goalCopyVsMove: a copy of the goal case at least 70% of a move's rate (issue #12); its
	// peak RSS is held to goalRSSMiB like the move's.
	goalCopyVsMove = 0.70
)

// evaluateTargets states, for each goal, what was measured and whether it was met.
func evaluateTargets(cases []CaseResult) []Target {
	goalCaseResult := goalCaseOf(cases)
	caseName := Case{Count: goalCase, Size: kib}.Name()
	var targets []Target

	// Throughput against artemis transfer and against the limit.
	vsDefault := Target{Goal: fmt.Sprintf("move of %s at least %.0fx `artemis transfer` with its default commit interval (core)", caseName, goalVsDefault)}
	vsLimit := Target{Goal: fmt.Sprintf("move of %s at least %.0f%% of the raw broker limit", caseName, goalVsLimit*100)}
	if goalCaseResult == nil {
		vsDefault.Status, vsDefault.Measured = statusNotMeasured, "this profile has no "+caseName+" case"
		vsLimit.Status, vsLimit.Measured = statusNotMeasured, "this profile has no "+caseName+" case"
	} else {
		r := goalCaseResult.Ratios
		ours := goalCaseResult.summary(ContenderOurs)
		dflt := goalCaseResult.summary(ContenderCoreDflt)
		switch {
		case ours == nil || ours.OKRuns == 0:
			vsDefault.Status, vsDefault.Measured = statusFailed, "no correct run of ours"
		case dflt == nil || dflt.OKRuns == 0:
			vsDefault.Status, vsDefault.Measured = statusFailed, "no correct run of artemis transfer (core, default commit)"
		default:
			vsDefault.Measured = fmt.Sprintf("%.2fx (%.0f vs %.0f msg/s)", r.VsTransferDefault, ours.MsgsPerSec, dflt.MsgsPerSec)
			vsDefault.Status = metOrMissed(r.VsTransferDefault >= goalVsDefault)
		}
		switch {
		case ours == nil || ours.OKRuns == 0:
			vsLimit.Status, vsLimit.Measured = statusFailed, "no correct run of ours"
		case goalCaseResult.Limit <= 0:
			vsLimit.Status, vsLimit.Measured = statusFailed, "the raw limit could not be measured"
		default:
			vsLimit.Measured = fmt.Sprintf("%.0f%% (%.0f of %.0f msg/s)", 100*r.VsLimit, ours.MsgsPerSec, goalCaseResult.Limit)
			vsLimit.Status = metOrMissed(r.VsLimit >= goalVsLimit)
		}
	}
	targets = append(targets, vsDefault, vsLimit)

	// Memory: every 1 KiB case, the highest peak of any correct run.
	rss := Target{Goal: fmt.Sprintf("peak relay RSS below %.0f MiB for 1 KiB messages at every queue size", goalRSSMiB)}
	worst, worstCase, measured := 0.0, "", 0
	for i := range cases {
		if cases[i].Size != kib {
			continue
		}
		if s := cases[i].summary(ContenderOurs); s != nil && s.OKRuns > 0 {
			measured++
			if s.MaxRSSMiB > worst {
				worst, worstCase = s.MaxRSSMiB, cases[i].Name
			}
		}
	}
	if measured == 0 {
		rss.Status, rss.Measured = statusNotMeasured, "no correct run of ours with 1 KiB messages"
	} else {
		rss.Measured = fmt.Sprintf("highest %.1f MiB (%s), over %s", worst, worstCase, plural(measured, "queue size"))
		rss.Status = metOrMissed(worst < goalRSSMiB)
	}
	targets = append(targets, rss)

	// Plan-time preflight: the slowest case's median.
	pre := Target{Goal: fmt.Sprintf("plan-time preflight (Engine.Preflight) under %.0f s", goalPreflightSecs)}
	slowest, slowestCase := 0.0, ""
	for i := range cases {
		if len(cases[i].PreflightSeconds) > 0 && cases[i].PreflightMedian > slowest {
			slowest, slowestCase = cases[i].PreflightMedian, cases[i].Name
		}
	}
	if slowestCase == "" {
		pre.Status, pre.Measured = statusNotMeasured, "no preflight measured"
	} else {
		pre.Measured = fmt.Sprintf("slowest median %.2f s (%s)", slowest, slowestCase)
		pre.Status = metOrMissed(slowest < goalPreflightSecs)
	}
	targets = append(targets, pre)
	return append(targets, copyTargets(goalCaseResult, caseName)...)
}

// copyTargets are issue #12's goals for a copy of the goal case: its rate against the move's,
// and its peak RSS.
func copyTargets(cr *CaseResult, caseName string) []Target {
	rate := Target{Goal: fmt.Sprintf("copy of %s at least %.0f%% of the move's rate on the same brokers", caseName, goalCopyVsMove*100)}
	rss := Target{Goal: fmt.Sprintf("peak RSS of a copy of %s below %.0f MiB", caseName, goalRSSMiB)}
	var ours, cp *ContenderSummary
	if cr != nil {
		ours, cp = cr.summary(ContenderOurs), cr.summary(ContenderCopy)
	}
	switch {
	case cp == nil || cp.Runs == 0:
		rate.Status, rate.Measured = statusNotMeasured, "no copy of "+caseName+" in this run"
		rss.Status, rss.Measured = statusNotMeasured, "no copy of "+caseName+" in this run"
		return []Target{rate, rss}
	case cp.OKRuns == 0:
		rate.Status, rate.Measured = statusFailed, "no correct run of ours (copy)"
		rss.Status, rss.Measured = statusFailed, "no correct run of ours (copy)"
		return []Target{rate, rss}
	case ours == nil || ours.OKRuns == 0:
		rate.Status, rate.Measured = statusFailed, "no correct run of ours (move)"
	default:
		rate.Measured = fmt.Sprintf("%.0f%% (%.0f vs %.0f msg/s)", 100*cr.Ratios.CopyVsMove, cp.MsgsPerSec, ours.MsgsPerSec)
		rate.Status = metOrMissed(cr.Ratios.CopyVsMove >= goalCopyVsMove)
	}
	rss.Measured = fmt.Sprintf("highest %.1f MiB over %s (median %.1f MiB)", cp.MaxRSSMiB, plural(cp.OKRuns, "run"), cp.PeakRSSMiB)
	rss.Status = metOrMissed(cp.MaxRSSMiB < goalRSSMiB)
	return []Target{rate, rss}
}

func metOrMissed(ok bool) string {
	if ok {
		return statusMet
	}
	return statusMissed
}
