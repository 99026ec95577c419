package core

import (
	"context"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// Preflight is a mode's preflight: the refusal rules of spec against both brokers as they are
// now, with the checks that write to them (the canaries) or without.
type Preflight func(ctx context.Context, spec Spec, writes bool) ([]preflight.Finding, error)

// Check applies the refusal rules of the run's mode (check) to spec, with every check, and
// returns a *RefusedError when any refuses. A full preflight of the same transfer that passed
// moments ago in this process (PassedChecks) stands in for it.
func (e *Setup) Check(ctx context.Context, spec Spec, check Preflight) error {
	if e.PassedChecks.take(CheckKey(spec, e.Options)) {
		return nil
	}
	findings, err := check(ctx, spec, true)
	if err != nil {
		return err
	}
	if !preflight.HasErrors(findings) {
		return nil
	}
	refused := &RefusedError{}
	for _, f := range findings {
		if f.Severity == preflight.Error {
			refused.Findings = append(refused.Findings, f)
		}
	}
	return refused
}
