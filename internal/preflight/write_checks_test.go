package preflight

import "testing"

// TestCheck_WarnsThatAPlanWithoutWritesLeavesChecksToApply: a reviewer's plan that may not write
// skips the canaries; it says which checks apply makes, and does not also call the skipped
// duplicate-detection canary unverified.
func TestCheck_WarnsThatAPlanWithoutWritesLeavesChecksToApply(t *testing.T) {
	checkRule(t, summaryWriteChecksSkipped, []ruleCase{
		{name: "every check made", edit: func(*Facts) {}},
		{name: "write checks skipped", edit: func(f *Facts) {
			f.SkippedWriteChecks = []string{"that the user may create a staging queue", "that the target discards a repeated duplicate id"}
			f.DuplicateDetection = DuplicateProbe{Outcome: DedupSkipped}
		}, want: warning("", "plan_without_writes", "may create a staging queue, nor that the target discards", "Apply checks them")},
	})
	f := typical()
	f.DuplicateDetection = DuplicateProbe{Outcome: DedupSkipped}
	for _, finding := range Check(f) {
		if finding.Summary == summaryDedupUnknown || finding.Summary == summaryDedupDisabled {
			t.Errorf("a skipped canary gave %q", finding.Summary)
		}
	}
}
