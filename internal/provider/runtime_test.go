package provider

import (
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

func TestUnexplained_ShowsEachExplanationOnceAndEveryFindingOfTheBrokers(t *testing.T) {
	frozen := preflight.Finding{Severity: preflight.Warning, Attribute: "filter", Summary: "Frozen", Detail: "how", Explanation: true}
	form := preflight.Finding{Severity: preflight.Warning, Summary: "AMQP form", Detail: "brokers a and b", Explanation: true}
	otherForm := preflight.Finding{Severity: preflight.Warning, Summary: "AMQP form", Detail: "brokers a and c", Explanation: true}
	count := preflight.Finding{Severity: preflight.Warning, Summary: "10 selected", Detail: "on q"}
	b := &providerRuntime{}
	// Three transfers planned by one provider: the first explains, the others do not repeat it;
	// an explanation that differs (other brokers) and every finding of the brokers still show.
	plans := [][]preflight.Finding{{count, frozen, form}, {count, frozen, form}, {frozen, otherForm, count}}
	want := [][]string{{"10 selected", "Frozen", "AMQP form"}, {"10 selected"}, {"AMQP form", "10 selected"}}
	for i, findings := range plans {
		got := b.unexplained(findings)
		var summaries []string
		for _, f := range got {
			summaries = append(summaries, f.Summary)
			if f.Explanation && !strings.HasSuffix(f.Detail, explainedOnceNote) {
				t.Errorf("plan %d: explanation %q does not say it is shown once", i, f.Summary)
			}
			if !f.Explanation && strings.HasSuffix(f.Detail, explainedOnceNote) {
				t.Errorf("plan %d: finding %q is marked as shown once", i, f.Summary)
			}
		}
		if strings.Join(summaries, "|") != strings.Join(want[i], "|") {
			t.Errorf("plan %d shows %v, want %v", i, summaries, want[i])
		}
	}
	if findings := []preflight.Finding{frozen}; len((*providerRuntime)(nil).unexplained(findings)) != 1 {
		t.Error("without a provider configuration every finding shows")
	}
}
