package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// TestRecoveryWarnings_SayWhatTheNextApplyDoesWithTheRun: the plan's warnings about an adopted
// or a manifest-less run say what apply will do with that run: a copy has no staging queue to
// speak of, and a run that staged nothing is started again, not resumed.
func TestRecoveryWarnings_SayWhatTheNextApplyDoesWithTheRun(t *testing.T) {
	endpoint := func(broker, queue string) *endpointModel {
		return &endpointModel{Broker: types.StringValue(broker), Queue: types.StringValue(queue)}
	}
	state := queueTransferModel{RunID: types.StringValue("0123456789ab-m1x2y3"), Mode: types.StringValue("move"),
		Source: endpoint("dc1", "orders"), Target: endpoint("dc2", "orders"),
		StagingQueue: types.StringValue("studio.transfer.0123456789ab-m1x2y3"), MessagesRemaining: types.Int64Value(42)}
	copyState := state
	copyState.Mode = types.StringValue("copy")
	cases := []struct {
		name    string
		got     string
		want    []string
		notWant []string
	}{
		{"adopted move", resumeWarning(state), []string{"42 messages in staging queue studio.transfer.0123456789ab-m1x2y3", "dc2/orders"}, nil},
		{"adopted copy", resumeWarning(copyState), []string{"Copy run 0123456789ab-m1x2y3", "ledger", "dc2/orders", "source queue as it is"},
			[]string{"staging"}},
		{"no manifest, nothing staged", noManifestWarning(transfer.UnfinishedRun{RunID: "r1", ManifestError: transfer.ErrNoManifest}, "dc1"),
			[]string{"stopped before anything was staged", "starts the transfer again as a new run"}, []string{"resumes", "artemis_transfer_return"}},
		{"no manifest, staged", noManifestWarning(transfer.UnfinishedRun{RunID: "r1", Messages: 7, ManifestError: transfer.ErrNoManifest}, "dc1"),
			[]string{"7 messages", "resumes the run", `broker = "dc1" and run_id = "r1"`}, nil},
		{"unreadable manifest, nothing staged", noManifestWarning(transfer.UnfinishedRun{RunID: "r1", ManifestError: fmt.Errorf("bad json")}, "dc1"),
			[]string{"resumes the run"}, []string{"starts the transfer again"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, w := range c.want {
				if !strings.Contains(c.got, w) {
					t.Errorf("%q\nlacks %q", c.got, w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(c.got, w) {
					t.Errorf("%q\nhas %q", c.got, w)
				}
			}
		})
	}
}
