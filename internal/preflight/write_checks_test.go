package preflight

import "testing"

// TestCheck_WarnsOnceOnTheTargetThatAPlanThatOnlyReadsLeavesProofsToApply: a plan that only reads
// sends no canary; one warning, on target.broker, says which proofs apply makes and how to make
// them at plan, and the skipped duplicate-detection canary is not also called unverified.
func TestCheck_WarnsOnceOnTheTargetThatAPlanThatOnlyReadsLeavesProofsToApply(t *testing.T) {
	checkRule(t, summaryWriteChecksSkipped, []ruleCase{
		{name: "every check made", edit: func(*Facts) {}},
		{name: "write checks skipped", edit: func(f *Facts) {
			f.SkippedWriteChecks = []string{"that the user may create a staging queue", "that the target discards a repeated duplicate id"}
			f.DuplicateDetection = DuplicateProbe{Outcome: DedupSkipped}
		}, want: warning("target.broker", "only read the brokers", "may create a staging queue, nor that the target discards", "Apply proves them", "plan_sends_canaries")},
	})
	f := typical()
	f.DuplicateDetection = DuplicateProbe{Outcome: DedupSkipped}
	for _, finding := range Check(f) {
		if finding.Summary == summaryDedupUnknown || finding.Summary == summaryDedupDisabled {
			t.Errorf("a skipped canary gave %q", finding.Summary)
		}
	}
}
