package move

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// UnfinishedRun is a run whose staging queue or manifest queue still exists on the source
// broker: a run starts with its manifest queue and ends by removing it last.
type UnfinishedRun struct {
	RunID         string
	T0            time.Time
	StagingQueue  string
	Messages      int64
	Consumers     int
	Manifest      *Manifest // nil when it is missing or unreadable
	ManifestError error
}

// unfinishedRuns lists the runs with a staging queue or a manifest queue on the source broker:
// those of spec when spec is not nil, else all. Oldest first. A run killed as it started or
// finished has only its manifest queue (Messages and Consumers are then 0).
func (e *Mover) unfinishedRuns(ctx context.Context, spec *core.Spec) ([]UnfinishedRun, error) {
	prefix := core.StagingPrefix
	if spec != nil {
		prefix += spec.Key() + "-"
	}
	queues, err := e.setup.Source.ListQueues(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("looking for unfinished runs on broker %q: %w", e.setup.Source.Name(), err)
	}
	// The listing holds the manifest queues too: their message counts say how many records
	// to read.
	stored := map[string]int64{}
	byName := map[string]artemis.QueueSummary{}
	for _, q := range queues {
		stored[q.Name] = q.MessageCount
		byName[q.Name] = q
	}
	ids := runIDsOf(queues)
	var runs []UnfinishedRun
	var conn *artemis.Connection
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	for _, id := range ids {
		q := byName[StagingQueue(id)]
		_, t0, _ := core.ParseRunID(id)
		run := UnfinishedRun{RunID: id, T0: t0, StagingQueue: StagingQueue(id), Messages: q.MessageCount, Consumers: q.ConsumerCount}
		if conn == nil {
			if conn, err = core.ConnectManagementNode(ctx, e.setup.Source); err != nil {
				return nil, fmt.Errorf("reading run manifests on broker %q: %w", e.setup.Source.Name(), err)
			}
		}
		if m, err := e.readManifest(ctx, conn, id, stored[ManifestQueue(id)]); err == nil {
			run.Manifest = &m
		} else {
			run.ManifestError = err
		}
		runs = append(runs, run)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].T0.Before(runs[j].T0) })
	return runs, nil
}

// runIDsOf returns the ids of the runs whose staging queue or manifest queue is in queues.
func runIDsOf(queues []artemis.QueueSummary) []string {
	var ids []string
	seen := map[string]bool{}
	for _, q := range queues {
		id := runIDFromQueue(q.Name)
		if id == "" {
			id, _ = runIDOfManifestQueue(q.Name)
		}
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// UnfinishedRun looks up one run by its id on the source broker, reading its staging queue and
// its manifest only. The error matches core.ErrNoSuchRun when the run has neither its staging
// queue nor its manifest queue there.
func (e *Mover) UnfinishedRun(ctx context.Context, runID string) (UnfinishedRun, error) {
	if _, _, err := core.ParseRunID(runID); err != nil {
		return UnfinishedRun{}, err
	}
	q, err := e.setup.Source.Queue(ctx, StagingQueue(runID))
	if errors.Is(err, artemis.ErrNotFound) {
		// Killed as it started or finished, a run has only its manifest queue.
		if _, err = e.setup.Source.Queue(ctx, ManifestQueue(runID)); err == nil {
			q = artemis.QueueInfo{Name: StagingQueue(runID)}
		}
	}
	if errors.Is(err, artemis.ErrNotFound) {
		return UnfinishedRun{}, fmt.Errorf("run %s: no staging queue %s on broker %q (finished or returned): %w",
			runID, StagingQueue(runID), e.setup.Source.Name(), core.ErrNoSuchRun)
	}
	if err != nil {
		return UnfinishedRun{}, fmt.Errorf("reading run %s on broker %q: %w", runID, e.setup.Source.Name(), err)
	}
	_, t0, _ := core.ParseRunID(runID)
	run := UnfinishedRun{RunID: runID, T0: t0, StagingQueue: q.Name, Messages: q.MessageCount, Consumers: q.ConsumerCount}
	stored, err := e.storedRecords(ctx, runID)
	if err != nil {
		return UnfinishedRun{}, err
	}
	conn, err := core.ConnectManagementNode(ctx, e.setup.Source)
	if err != nil {
		return UnfinishedRun{}, fmt.Errorf("reading the manifest of run %s on broker %q: %w", runID, e.setup.Source.Name(), err)
	}
	defer conn.Close()
	if m, err := e.readManifest(ctx, conn, runID, stored); err == nil {
		run.Manifest = &m
	} else {
		run.ManifestError = err
	}
	return run, nil
}

// loadManifest reads the manifest of a run that has a staging queue or a manifest queue.
func (e *Mover) loadManifest(ctx context.Context, runID string) (Manifest, error) {
	_, stagingErr := e.setup.Source.Queue(ctx, StagingQueue(runID))
	if stagingErr != nil && !errors.Is(stagingErr, artemis.ErrNotFound) {
		return Manifest{}, stagingErr
	}
	_, manifestErr := e.setup.Source.Queue(ctx, ManifestQueue(runID))
	if manifestErr != nil && !errors.Is(manifestErr, artemis.ErrNotFound) {
		return Manifest{}, manifestErr
	}
	if stagingErr != nil && manifestErr != nil {
		return Manifest{}, fmt.Errorf("run %s: no staging queue %s on broker %q: the run finished or was returned",
			runID, StagingQueue(runID), e.setup.Source.Name())
	}
	stored, err := e.storedRecords(ctx, runID)
	if err != nil {
		return Manifest{}, err
	}
	conn, err := core.ConnectManagementNode(ctx, e.setup.Source)
	if err != nil {
		return Manifest{}, err
	}
	defer conn.Close()
	return e.readManifest(ctx, conn, runID, stored)
}
