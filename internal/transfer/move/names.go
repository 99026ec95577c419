package move

import (
	"strconv"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// manifestSuffix ends the name of the queue beside staging that holds the run's manifest.
const manifestSuffix = ".manifest"

// quarantineSuffix ends the name of the run's dead-letter queue.
const quarantineSuffix = ".quarantine"

// StagingQueue is the name of a run's staging queue and of its address.
func StagingQueue(runID string) string { return core.StagingPrefix + runID }

// ManifestQueue is the queue, on the staging address, that holds the run's manifest.
func ManifestQueue(runID string) string { return core.StagingPrefix + runID + manifestSuffix }

// QuarantineQueue is the dead-letter queue of a run's staging, on an address of its own. The
// broker dead-letters a staged message it cannot convert for an AMQP consumer (a Core
// StreamMessage holding a byte[], for one); without a dead-letter address it would drop it.
func QuarantineQueue(runID string) string { return core.StagingPrefix + runID + quarantineSuffix }

// runIDFromQueue returns the run id of a staging queue name, or "" when name is not one (a
// manifest queue is not a staging queue).
func runIDFromQueue(name string) string {
	if !strings.HasPrefix(name, core.StagingPrefix) || strings.HasSuffix(name, manifestSuffix) || strings.HasSuffix(name, quarantineSuffix) {
		return ""
	}
	id := strings.TrimPrefix(name, core.StagingPrefix)
	if _, _, err := core.ParseRunID(id); err != nil {
		return ""
	}
	return id
}

// duplicateID is the _AMQ_DUPL_ID of a relayed message: the run, and the source message's
// broker id on the source node. It is the same every time the message is relayed, so the
// target's duplicate detection drops a repeat after a crash.
func duplicateID(runID, sourceNodeID string, sourceMessageID int64) string {
	return "studio:" + runID + ":" + sourceNodeID + ":" + strconv.FormatInt(sourceMessageID, 10)
}

// runIDOfManifestQueue returns the run id of a manifest queue name.
func runIDOfManifestQueue(name string) (string, bool) {
	if !strings.HasPrefix(name, core.StagingPrefix) || !strings.HasSuffix(name, manifestSuffix) {
		return "", false
	}
	id := strings.TrimSuffix(strings.TrimPrefix(name, core.StagingPrefix), manifestSuffix)
	if _, _, err := core.ParseRunID(id); err != nil {
		return "", false
	}
	return id, true
}
