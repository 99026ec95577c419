package move

import (
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Table tests of the names of a move's queues.

func TestRunIDFromQueue_TakesOnlyStagingQueuesOfRuns(t *testing.T) {
	id := core.NewRunID(transfertest.Spec(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct{ queue, want string }{
		{StagingQueue(id), id},
		{ManifestQueue(id), ""},
		{QuarantineQueue(id), ""},
		{core.StagingPrefix + "canary-0123456789ab", ""},
		{core.StagingPrefix + "not-a-run", ""},
		{id, ""}, // a run id without the prefix is an ordinary queue name
		{"orders", ""},
	}
	for _, tt := range tests {
		if got := runIDFromQueue(tt.queue); got != tt.want {
			t.Errorf("runIDFromQueue(%q) = %q, want %q", tt.queue, got, tt.want)
		}
	}
}
