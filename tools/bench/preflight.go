package bench

import (
	"context"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// preflightRuns is how many times the preflight is timed per case.
const preflightRuns = 3

// measurePreflight times Engine.Preflight with fresh clients each time, as a `terraform plan`
// (a new provider process) has them, against the filled source queue.
func (b *bench) measurePreflight(ctx context.Context, spec transfer.Spec, cr *CaseResult) {
	for i := 0; i < preflightRuns; i++ {
		src, err := b.srcAccess.client()
		if err != nil {
			cr.PreflightError = err.Error()
			return
		}
		tgt, err := b.tgtAccess.client()
		if err != nil {
			cr.PreflightError = err.Error()
			return
		}
		e := &transfer.Engine{Source: src, Target: tgt}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		start := time.Now()
		findings, err := e.Preflight(pctx, spec)
		took := time.Since(start)
		cancel()
		if err != nil {
			cr.PreflightError = err.Error()
			b.logf("%s: preflight: %v", cr.Name, err)
			return
		}
		for _, f := range findings {
			if f.Severity == preflight.Error {
				cr.PreflightError = f.Summary + ": " + f.Detail
			}
		}
		cr.PreflightSeconds = append(cr.PreflightSeconds, took.Seconds())
	}
	b.logf("%s: preflight %v s", cr.Name, roundAll(cr.PreflightSeconds))
}

func roundAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(int(x*1000+0.5)) / 1000
	}
	return out
}
