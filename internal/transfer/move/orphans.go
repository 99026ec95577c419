package move

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Orphan is a run whose staging queue exists on a broker while no process works on it: no relay
// consumes its staging queue and no process holds its lease. Its messages wait there until the
// run is adopted (resumed) or returned.
type Orphan struct {
	RunID        string
	T0           time.Time
	StagingQueue string
	Messages     int64 // in the staging queue
	Quarantined  int64 // in the quarantine queue: messages the broker could not convert for the relay
	// Manifest is nil when the run's manifest is gone (or unreadable: ManifestError).
	Manifest      *Manifest
	ManifestError error
	// SourceQueue and SourceAddress are where the staged messages came from: the manifest's
	// source, or what the broker recorded on the first staged message when there is no manifest
	// (empty when staging is empty too).
	SourceQueue, SourceAddress string
}

// Orphans lists the orphaned runs on the source broker, oldest first: those with a staging
// queue, and those a kill left with only their manifest queue (as a run starts or finishes).
func (e *Mover) Orphans(ctx context.Context) ([]Orphan, error) {
	queues, err := e.setup.Source.ListQueues(ctx, core.StagingPrefix)
	if err != nil {
		return nil, fmt.Errorf("looking for staging queues on broker %q: %w", e.setup.Source.Name(), err)
	}
	byName := map[string]artemis.QueueSummary{}
	for _, q := range queues {
		byName[q.Name] = q
	}
	var conn *artemis.Connection
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	var out []Orphan
	for _, id := range runIDsOf(queues) {
		q := byName[StagingQueue(id)]
		manifest, hasManifest := byName[ManifestQueue(id)]
		if q.ConsumerCount > 0 || (hasManifest && manifest.ConsumerCount > 0) {
			continue // a process works on it
		}
		_, t0, _ := core.ParseRunID(id)
		o := Orphan{RunID: id, T0: t0, StagingQueue: StagingQueue(id), Messages: q.MessageCount, Quarantined: byName[QuarantineQueue(id)].MessageCount}
		if conn == nil {
			if conn, err = core.ConnectManagementNode(ctx, e.setup.Source); err != nil {
				return nil, err
			}
		}
		if hasManifest {
			if m, err := e.readManifest(ctx, conn, id, manifest.MessageCount); err == nil {
				o.Manifest = &m
				o.SourceQueue, o.SourceAddress = m.Spec.Source.Queue, m.Spec.Source.Address
			} else {
				o.ManifestError = err
			}
		} else {
			o.ManifestError = ErrNoManifest
		}
		if o.Manifest == nil && q.MessageCount > 0 {
			origin, err := firstStagedOrigin(ctx, conn, id)
			if err != nil {
				return nil, err
			}
			o.SourceQueue, o.SourceAddress = origin.Queue, origin.Address
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].T0.Before(out[j].T0) })
	return out, nil
}

// firstStagedOrigin reads where the first staged message of a run came from, without consuming it.
func firstStagedOrigin(ctx context.Context, conn *artemis.Connection, runID string) (stagedOrigin, error) {
	staging := StagingQueue(runID)
	b, err := conn.NewBrowser(ctx, artemis.FQQN(staging, staging), artemis.BrowserOptions{Credit: 1, IdleTimeout: manifestReadTimeout})
	if err != nil {
		return stagedOrigin{}, fmt.Errorf("reading the staged messages of run %s: %w", runID, err)
	}
	defer b.Close(context.WithoutCancel(ctx)) //nolint:errcheck // nothing to settle on a browser
	msg, ok, err := b.Next(ctx)
	if err != nil || !ok {
		return stagedOrigin{}, err
	}
	return originOf(msg)
}

// ReturnOrphan puts an orphaned run's messages back where they came from and removes its
// staging. With a manifest it is Return (which first settles the last in-flight batch at the
// target, when the engine has the target). Without one it uses only what the broker holds: the
// source queue recorded on the staged messages, which must all come from that one queue.
func (e *Mover) ReturnOrphan(ctx context.Context, runID string) (core.Result, error) {
	orphans, err := e.Orphans(ctx)
	if err != nil {
		return core.Result{}, err
	}
	for _, o := range orphans {
		if o.RunID != runID {
			continue
		}
		if o.Manifest != nil {
			return e.Return(ctx, runID)
		}
		if !errors.Is(o.ManifestError, ErrNoManifest) {
			// The manifest may be there, unread: a return without it would ignore the run's
			// in-flight record and could put back messages the target holds.
			return core.Result{}, o.ManifestError
		}
		if o.SourceQueue == "" {
			return e.returnWithoutManifest(ctx, runID, "")
		}
		// Every staged message must share the source queue, or a return would misplace some.
		others, err := e.countStaged(ctx, runID,
			fmt.Sprintf("%s <> '%s'", core.PropOrigQueue, strings.ReplaceAll(o.SourceQueue, "'", "''")), 1)
		if err != nil {
			return core.Result{}, err
		}
		if others > 0 {
			return core.Result{}, fmt.Errorf("run %s has no manifest and its staged messages come from more than one queue; return them with the broker's retryMessages on %s",
				runID, StagingQueue(runID))
		}
		return e.returnWithoutManifest(ctx, runID, o.SourceQueue)
	}
	return core.Result{}, fmt.Errorf("run %s is not an orphan on broker %q (it finished, or a process is working on it): %w",
		runID, e.setup.Source.Name(), errNotOrphan)
}

// errNotOrphan: the run is gone or alive.
var errNotOrphan = errors.New("not an orphaned run")
