package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// Table tests of the diagnostics artemis_queue_transfer makes of preflight findings. None of
// them needs a broker or terraform.

func TestAttributePath_MapsADottedPreflightAttributeToItsPath(t *testing.T) {
	tests := []struct {
		attribute string
		want      path.Path
	}{
		{"filter", path.Root("filter")},
		{"batch_size", path.Root("batch_size")},
		{"message_ids", path.Root("message_ids")},
		{"source.broker", path.Root("source").AtName("broker")},
		{"target.queue", path.Root("target").AtName("queue")},
	}
	for _, tt := range tests {
		if got := attributePath(path.Empty(), tt.attribute); !got.Equal(tt.want) {
			t.Errorf("attributePath(path.Empty(), %q) = %s, want %s", tt.attribute, got, tt.want)
		}
	}
}

// findingDiag is what a test expects of one diagnostic.
type findingDiag struct {
	severity diag.Severity
	path     string // "" for a diagnostic on the whole resource
	summary  string
}

func TestAddFindings_PutsEachFindingOnItsAttributeWithItsSeverityAndLogsNotes(t *testing.T) {
	findings := []preflight.Finding{
		{Severity: preflight.Error, Attribute: "target.queue", Summary: "Target queue has a filter", Detail: "d1"},
		{Severity: preflight.Error, Summary: "Source broker unreachable", Detail: "d2"},
		{Severity: preflight.Warning, Attribute: "batch_size", Summary: "Batch larger than the id cache", Detail: "d3"},
		{Severity: preflight.Warning, Summary: "Messages expire in staging", Detail: "d4"},
		// An unset severity refuses.
		{Attribute: "filter", Summary: "Invalid filter", Detail: "d5"},
		// A note asks nothing of the reviewer: it is logged, not shown.
		{Severity: preflight.Note, Attribute: "filter", Summary: "42 messages are selected now", Detail: "d6"},
	}
	want := []findingDiag{
		// Terraform points at the resource block, not inside target = {...}, so the summary
		// names the attribute too.
		{diag.SeverityError, "target.queue", "Target queue has a filter (target.queue)"},
		{diag.SeverityError, "", "Source broker unreachable"},
		{diag.SeverityWarning, "batch_size", "Batch larger than the id cache (batch_size)"},
		{diag.SeverityWarning, "", "Messages expire in staging"},
		{diag.SeverityError, "filter", "Invalid filter (filter)"},
	}
	var diags diag.Diagnostics
	addFindings(context.Background(), findings, &diags)
	if len(diags) != len(want) {
		t.Fatalf("%d findings gave %d diagnostics: %v", len(findings), len(diags), diags)
	}
	for i, d := range diags {
		got := findingDiag{severity: d.Severity(), summary: d.Summary()}
		if withPath, ok := d.(diag.DiagnosticWithPath); ok {
			got.path = withPath.Path().String()
		}
		if got != want[i] {
			t.Errorf("diagnostic %d = %+v, want %+v", i, got, want[i])
		}
		if d.Detail() != findings[i].Detail {
			t.Errorf("diagnostic %d detail = %q, want the finding's %q", i, d.Detail(), findings[i].Detail)
		}
	}
}

func TestAddFindings_OfNoFindingsAddsNothing(t *testing.T) {
	var diags diag.Diagnostics
	addFindings(context.Background(), nil, &diags)
	if len(diags) != 0 {
		t.Errorf("diagnostics = %v, want none", diags)
	}
}
