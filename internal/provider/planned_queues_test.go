package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// A transfer into a queue that an artemis_queue of the same configuration creates is what the
// reviewer asked for: the plan notes it in the log and shows no warning, while a transfer into a
// queue that nothing creates is still refused.
func TestDeferPlannedTargets_NotesATargetThisPlanCreatesAndRefusesAnyOther(t *testing.T) {
	missing := preflight.Finding{Severity: preflight.Error, Attribute: "target.queue", Summary: "Target queue does not exist", Detail: "d"}
	if !preflight.IsTargetMissing(missing) {
		t.Fatal("fixture: the finding is not preflight's refusal of a missing target queue")
	}
	other := preflight.Finding{Severity: preflight.Warning, Attribute: "source.queue", Summary: "Source queue has consumers", Detail: "d2"}
	var planned plannedQueues
	planned.add("new", "app.orders")

	cases := []struct {
		name        string
		target      preflight.Endpoint
		wantErrors  int
		wantWarning int
		wantNote    bool
	}{
		{name: "created by this plan", target: preflight.Endpoint{Broker: "new", Queue: "app.orders"}, wantWarning: 1, wantNote: true},
		{name: "created on another broker", target: preflight.Endpoint{Broker: "old", Queue: "app.orders"}, wantErrors: 1, wantWarning: 1},
		{name: "created by nothing", target: preflight.Endpoint{Broker: "new", Queue: "app.invoices"}, wantErrors: 1, wantWarning: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := deferPlannedTargets([]preflight.Finding{missing, other}, tc.target, &planned)
			noted := false
			for _, f := range got {
				if f.Severity == preflight.Note && f.Summary == "Target queue is created by this apply" {
					noted = true
				}
			}
			if noted != tc.wantNote {
				t.Errorf("noted = %v, want %v: %+v", noted, tc.wantNote, got)
			}
			var diags diag.Diagnostics
			addFindings(context.Background(), got, &diags)
			if diags.ErrorsCount() != tc.wantErrors || diags.WarningsCount() != tc.wantWarning {
				t.Errorf("%d errors and %d warnings, want %d and %d: %v", diags.ErrorsCount(), diags.WarningsCount(), tc.wantErrors, tc.wantWarning, diags)
			}
		})
	}
}
