// Package transfer is the move engine: it moves a selection of messages from a queue on one
// broker to a queue on another without losing or doubling any, even when the process dies
// halfway. A run stages its selection broker-side into its own durable queue on the source
// (studio.transfer.<runId>), relays it over AMQP with a duplicate-detection id per message, and
// removes the staging queue when it is empty. Everything a run needs to resume lives on the
// source broker, so a fresh process can find and finish it.
//
// The package knows nothing of Terraform. Its files, in the order a run meets them:
//
//   - run.go: run identity (spec, selection, run ids, queue names, duplicate ids)
//   - options.go: Options with their defaults and bounds, Result, the Progress snapshot
//   - engine.go: the orchestration of a run (Move, Resume, start, check, execute, stopped)
//   - preflight.go: the facts the refusal rules need, and the plan-time canaries;
//     dedup_probes.go: one duplicate-detection canary per target for a process's transfers;
//     passed_checks.go: a passed preflight standing in for the check of the run right after it
//   - runs.go: finding unfinished runs; orphans.go: orphaned ones
//   - records.go: the run's records on the source broker (manifest, lease, in-flight record)
//   - staging.go, expiry.go: moving the selection into staging (never far ahead of the relay),
//     expiring messages window by window
//   - relay.go, links.go, batch.go, wait.go: the relay loop, its links, a batch's send and
//     confirmation, and waiting for capacity
//   - pace.go: holding every send (a move's and a copy's) to Options.MaxMessagesPerSecond
//   - message.go: the copy of a staged message the relay sends
//   - tally.go, progress.go: counting each relayed message once, and reporting progress (the
//     selection's size, the recent rate, the ETA over the whole selection, waits)
//   - return.go: putting a run's staged messages back on the source
//   - nodes.go: which node each connection of a run may reach
package transfer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// StagingPrefix starts the name of every staging queue (and its address).
const StagingPrefix = "studio.transfer."

// manifestSuffix ends the name of the queue beside staging that holds the run's manifest.
const manifestSuffix = ".manifest"

// quarantineSuffix ends the name of the run's dead-letter queue.
const quarantineSuffix = ".quarantine"

// Mode is what a run does with the source messages.
type Mode string

const (
	// ModeMove removes the messages from the source once the target holds them.
	ModeMove Mode = "move"
)

// Endpoint is a queue on a named broker.
type Endpoint struct {
	Broker string `json:"broker"` // the operator's name for the broker
	Queue  string `json:"queue"`
	// Address is the queue's address. Empty means "look it up"; a run records what it found.
	Address string `json:"address,omitempty"`
}

// FQQN is the fully qualified queue name, address::queue.
func (e Endpoint) FQQN() string { return e.Address + "::" + e.Queue }

func (e Endpoint) String() string { return e.Broker + "/" + e.Queue }

// Selection says which source messages a run takes. With neither field set it takes the whole
// queue. Filter and whole-queue selections are frozen at the run's start time t0: only
// messages whose producer timestamp (AMQTimestamp) is at most t0 are taken.
type Selection struct {
	// Filter is a Core filter expression (JMS selector syntax).
	Filter string `json:"filter,omitempty"`
	// MessageIDs are JMS message ids (JMSMessageID, "ID:<uuid>") or AMQP message-ids; an id
	// without the "ID:" prefix gets it, as the broker's AMQUserID does. Exact: not time-frozen.
	MessageIDs []string `json:"message_ids,omitempty"`
}

// Kind names the selection for messages and logs.
func (s Selection) Kind() string {
	switch {
	case len(s.MessageIDs) > 0:
		return "message ids"
	case s.Filter != "":
		return "filter"
	default:
		return "whole queue"
	}
}

// idsPerFilter bounds how many ids one staging filter lists, keeping each broker call short.
const idsPerFilter = 200

// StageFilters returns the Core filters that together select exactly the run's messages: one
// for a filter or whole-queue selection, one per chunk of ids for an id selection.
func (s Selection) StageFilters(t0 time.Time) []string {
	if len(s.MessageIDs) == 0 {
		frozen := "AMQTimestamp <= " + strconv.FormatInt(t0.UnixMilli(), 10)
		if s.Filter == "" {
			return []string{frozen}
		}
		return []string{"(" + s.Filter + ") AND " + frozen}
	}
	var filters []string
	for start := 0; start < len(s.MessageIDs); start += idsPerFilter {
		end := min(start+idsPerFilter, len(s.MessageIDs))
		quoted := make([]string, 0, end-start)
		for _, id := range s.MessageIDs[start:end] {
			quoted = append(quoted, "'"+strings.ReplaceAll(normalizeMessageID(id), "'", "''")+"'")
		}
		filters = append(filters, "AMQUserID IN ("+strings.Join(quoted, ", ")+")")
	}
	return filters
}

// normalizeMessageID gives an id the "ID:" prefix the broker's AMQUserID carries.
func normalizeMessageID(id string) string {
	if strings.HasPrefix(id, "ID:") {
		return id
	}
	return "ID:" + id
}

// Spec is what an operator asks for.
type Spec struct {
	Mode      Mode      `json:"mode"`
	Source    Endpoint  `json:"source"`
	Target    Endpoint  `json:"target"`
	Selection Selection `json:"selection"`
}

// Validate checks a spec without contacting a broker. Its errors name the field at fault.
func (s Spec) Validate() error {
	var errs []error
	if s.Mode != ModeMove && s.Mode != ModeCopy {
		errs = append(errs, fmt.Errorf("mode %q is not supported (use %q or %q)", s.Mode, ModeMove, ModeCopy))
	}
	for _, ep := range []struct {
		name string
		e    Endpoint
	}{{"source", s.Source}, {"target", s.Target}} {
		if ep.e.Broker == "" {
			errs = append(errs, fmt.Errorf("%s.broker is required", ep.name))
		}
		if ep.e.Queue == "" {
			errs = append(errs, fmt.Errorf("%s.queue is required", ep.name))
		}
		if strings.HasPrefix(ep.e.Queue, StagingPrefix) {
			errs = append(errs, fmt.Errorf("%s.queue %q is a staging queue of another run: adopt or return that run instead", ep.name, ep.e.Queue))
		}
	}
	if s.Source.Broker == s.Target.Broker && s.Source.Queue == s.Target.Queue {
		errs = append(errs, fmt.Errorf("source and target are the same queue %s", s.Source))
	}
	if s.Selection.Filter != "" && len(s.Selection.MessageIDs) > 0 {
		errs = append(errs, errors.New("selection: give filter or message_ids, not both"))
	}
	for i, id := range s.Selection.MessageIDs {
		if strings.TrimSpace(id) == "" {
			errs = append(errs, fmt.Errorf("message_ids[%d] is empty", i))
		}
	}
	return errors.Join(errs...)
}

// Key is a short digest of what the spec does. Runs of the same spec share it, which lets a new
// process find an unfinished run of the configuration it is given. Addresses are left out: a run
// fills them in from the brokers, and a queue name already names one queue on a broker.
func (s Spec) Key() string {
	canonical, _ := json.Marshal(struct {
		Mode      Mode      `json:"m"`
		Source    []string  `json:"s"`
		Target    []string  `json:"t"`
		Selection Selection `json:"sel"`
	}{s.Mode, []string{s.Source.Broker, s.Source.Queue}, []string{s.Target.Broker, s.Target.Queue}, s.Selection})
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])[:12]
}

// NewRunID names a run of spec started at t0: the spec's key, then t0 in base 36. Run ids hold
// only [0-9a-z-], so they never contain the broker's wildcard characters.
func NewRunID(spec Spec, t0 time.Time) string {
	return spec.Key() + "-" + strconv.FormatInt(t0.UnixMilli(), 36)
}

// ParseRunID splits a run id into its spec key and t0.
func ParseRunID(id string) (key string, t0 time.Time, err error) {
	key, stamp, ok := strings.Cut(id, "-")
	if !ok || len(key) != 12 || stamp == "" {
		return "", time.Time{}, fmt.Errorf("%q is not a run id (expected <12 hex digits>-<base-36 time>)", id)
	}
	if _, err := hex.DecodeString(key); err != nil {
		return "", time.Time{}, fmt.Errorf("%q is not a run id: %w", id, err)
	}
	ms, err := strconv.ParseInt(stamp, 36, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%q is not a run id: %w", id, err)
	}
	return key, time.UnixMilli(ms).UTC(), nil
}

// StagingQueue is the name of a run's staging queue and of its address.
func StagingQueue(runID string) string { return StagingPrefix + runID }

// ManifestQueue is the queue, on the staging address, that holds the run's manifest.
func ManifestQueue(runID string) string { return StagingPrefix + runID + manifestSuffix }

// QuarantineQueue is the dead-letter queue of a run's staging, on an address of its own. The
// broker dead-letters a staged message it cannot convert for an AMQP consumer (a Core
// StreamMessage holding a byte[], for one); without a dead-letter address it would drop it.
func QuarantineQueue(runID string) string { return StagingPrefix + runID + quarantineSuffix }

// RunIDFromQueue returns the run id of a staging queue name, or "" when name is not one (a
// manifest queue is not a staging queue).
func RunIDFromQueue(name string) string {
	if !strings.HasPrefix(name, StagingPrefix) || strings.HasSuffix(name, manifestSuffix) || strings.HasSuffix(name, quarantineSuffix) {
		return ""
	}
	id := strings.TrimPrefix(name, StagingPrefix)
	if _, _, err := ParseRunID(id); err != nil {
		return ""
	}
	return id
}

// DuplicateID is the _AMQ_DUPL_ID of a relayed message: the run, and the source message's
// broker id on the source node. It is the same every time the message is relayed, so the
// target's duplicate detection drops a repeat after a crash.
func DuplicateID(runID, sourceNodeID string, sourceMessageID int64) string {
	return "studio:" + runID + ":" + sourceNodeID + ":" + strconv.FormatInt(sourceMessageID, 10)
}
