package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

func TestNextStep_EveryStoppedApplySaysWhatToDoInOneSentence(t *testing.T) {
	move := stoppedRun{RunID: "0123456789ab-m1x2y3", SourceBroker: "dc1"}
	copyRun := stoppedRun{RunID: "0123456789ab-m1x2y3", SourceBroker: "dc1", Copy: true}
	notStarted := stoppedRun{SourceBroker: "dc1"}
	lapse := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	wrap := func(err error) error { return fmt.Errorf("relaying batch 3 of run %s: %w", move.RunID, err) }
	cases := []struct {
		name    string
		err     error
		run     stoppedRun
		want    []string // every one must be in the sentence
		notWant []string
	}{
		{"interrupted", wrap(transfer.ErrInterrupted), move, []string{"terraform apply again", "resumes run " + move.RunID, "not tainted"}, []string{"artemis_transfer_return"}},
		{"connection lost", wrap(errors.New("receiving from orders on broker \"dc1\": connection lost")), move, []string{"terraform apply again", "resumes run " + move.RunID}, nil},
		{"broker unreachable", wrap(artemis.ErrUnreachable), move, []string{"resumes run " + move.RunID}, nil},
		{"lease held", wrap(&ledger.LeaseHeldError{RunID: move.RunID, Holder: "ci-7", ExpiresAt: lapse}), copyRun,
			[]string{"ci-7", "finish", "2026-12-02T07:00:00Z", move.RunID}, nil},
		{"run busy", wrap(transfer.ErrRunBusy), move, []string{"other process", "resumes run " + move.RunID}, nil},
		{"copy busy", wrap(transfer.ErrRunBusy), copyRun, []string{"other apply", "terraform import", "second time"}, []string{"run terraform apply again"}},
		{"lease lost", wrap(ledger.ErrLeaseLost), copyRun, []string{"terraform apply again", "took the run over"}, nil},
		{"broker lease lost", wrap(transfer.ErrLeaseLost), move, []string{"terraform apply again", "took the run over"}, []string{"artemis_transfer_return"}},
		{"ledger away", wrap(ledger.ErrUnavailable), copyRun, []string{"ledger_dsn", "resumes run " + move.RunID}, nil},
		{"ledger too new", ledger.ErrSchemaTooNew, notStarted, []string{"provider version", "nothing moved"}, nil},
		{"wrong password", wrap(artemis.ErrUnauthorized), move, []string{"username and password", "resumes run " + move.RunID}, nil},
		{"missing permission", wrap(artemis.ErrForbidden), notStarted, []string{"permission", "terraform apply again"}, []string{"resumes"}},
		{"untrusted certificate", artemis.ErrUntrustedCertificate, notStarted, []string{"ca_cert_pem"}, nil},
		{"refused", &transfer.RefusedError{Findings: []preflight.Finding{{Severity: preflight.Error, Summary: "x"}}}, notStarted,
			[]string{"findings", "nothing moved"}, nil},
		{"refused resume", &transfer.RefusedError{ResumedRunID: move.RunID, StagingQueue: "studio.transfer." + move.RunID}, move,
			[]string{"resumes run " + move.RunID}, nil},
		{"move fails otherwise", wrap(errors.New("the target rejected a message")), move,
			[]string{"resumes run " + move.RunID, `artemis_transfer_return resource with broker = "dc1" and run_id = "` + move.RunID + `"`}, nil},
		{"copy fails otherwise", wrap(errors.New("the target rejected a message")), copyRun,
			[]string{"resumes run " + move.RunID, "ledger keeps"}, []string{"artemis_transfer_return"}},
		{"target discards a move", wrap(transfer.ErrTargetDiscards), move,
			[]string{"drops the messages", `artemis_transfer_return resource with broker = "dc1" and run_id = "` + move.RunID + `"`, "as a new run"}, []string{"resumes"}},
		{"target discards a copy", wrap(transfer.ErrTargetDiscards), copyRun, []string{"drops the messages", "copies as a new run", "nothing was copied"},
			[]string{"resumes", "artemis_transfer_return"}},
		{"nothing started", errors.New("source queue orders has no address"), notStarted, []string{"terraform apply again", "nothing moved"}, []string{"resumes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := nextStep(c.err, c.run)
			if !strings.HasPrefix(got, "Next: ") || !strings.HasSuffix(got, ".") || strings.Contains(got, "\n") ||
				strings.Count(strings.TrimSuffix(got, "."), ". ") > 0 {
				t.Errorf("not one sentence starting with Next: %q", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q: %s", w, got)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("has %q: %s", w, got)
				}
			}
		})
	}
}

func TestReportRunError_EndsWithTheNextStep(t *testing.T) {
	run := stoppedRun{RunID: "0123456789ab-m1x2y3", SourceBroker: "dc1"}
	for _, err := range []error{transfer.ErrInterrupted, errors.New("the target rejected a message"),
		&transfer.RefusedError{ResumedRunID: run.RunID, StagingQueue: "studio.transfer." + run.RunID}} {
		var diags diag.Diagnostics
		reportRunError(context.Background(), err, run, &diags)
		if !diags.HasError() {
			t.Fatalf("%v: no error reported", err)
		}
		last := diags.Errors()[len(diags.Errors())-1]
		if !strings.Contains(last.Detail(), "\n\nNext: ") {
			t.Errorf("%v: the error does not end with the next step:\n%s", err, last.Detail())
		}
	}
}
