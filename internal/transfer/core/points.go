package core

// Point names an instant in a move's start or end at which a test can stop the run
// (Hooks.Reached): a kill between two of these steps leaves a run partly created or partly
// removed, and the next apply must resume or cleanly restart it.
type Point string

const (
	// PointManifestQueue: a new run's manifest queue exists and holds nothing yet.
	PointManifestQueue Point = "manifest-queue"
	// PointManifestWritten: the run's manifest is stored.
	PointManifestWritten Point = "manifest-written"
	// PointStagingCreated: the run's staging and quarantine queues exist; nothing is staged yet.
	PointStagingCreated Point = "staging-created"
	// PointStagingRemoved: a finished run's staging queue is gone; its quarantine queue,
	// settings and manifest are left.
	PointStagingRemoved Point = "staging-removed"
	// PointSettingsRemoved: of a finished run, only the manifest queue is left.
	PointSettingsRemoved Point = "settings-removed"
	// PointReturnCounting: a return holds the run's leases and is about to count what earlier
	// processes relayed.
	PointReturnCounting Point = "return-counting"
	// PointOutwaitingLateMoves: a return holds the run's lease and begins to wait for a staging
	// move the run's earlier process may have sent.
	PointOutwaitingLateMoves Point = "outwaiting-late-moves"
	// PointStagingChecked: a run's end found its staging queue empty and is about to remove it.
	PointStagingChecked Point = "staging-checked"
)

// Reach runs the Reached hook, when set, at point p.
func (h Hooks) Reach(p Point) {
	if h.Reached != nil {
		h.Reached(p)
	}
}
