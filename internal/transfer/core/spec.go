package core

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// StagingPrefix starts the name of every staging queue (and its address).
const StagingPrefix = "studio.transfer."

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
func (e Endpoint) FQQN() string { return artemis.FQQN(e.Address, e.Queue) }

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
	quoted := s.quotedMessageIDs()
	var filters []string
	for start := 0; start < len(quoted); start += idsPerFilter {
		filters = append(filters, idFilter(quoted[start:min(start+idsPerFilter, len(quoted))]))
	}
	return filters
}

// MessageIDFilters packs an id selection into as few AMQUserID filters as keep each within
// maxLength characters (an id too long for that gets a filter of its own). A browse selector
// wants them few: a copy's browse of each ends only by waiting out its idle timeout.
func (s Selection) MessageIDFilters(maxLength int) []string {
	var filters []string
	var chunk []string
	length := len(idFilter(nil))
	for _, q := range s.quotedMessageIDs() {
		if len(chunk) > 0 && length+len(", ")+len(q) > maxLength {
			filters = append(filters, idFilter(chunk))
			chunk, length = nil, len(idFilter(nil))
		}
		if len(chunk) > 0 {
			length += len(", ")
		}
		chunk = append(chunk, q)
		length += len(q)
	}
	if len(chunk) > 0 {
		filters = append(filters, idFilter(chunk))
	}
	return filters
}

// quotedMessageIDs are the selection's ids as filter string literals, with the "ID:" prefix.
func (s Selection) quotedMessageIDs() []string {
	quoted := make([]string, 0, len(s.MessageIDs))
	for _, id := range s.MessageIDs {
		quoted = append(quoted, "'"+strings.ReplaceAll(normalizeMessageID(id), "'", "''")+"'")
	}
	return quoted
}

// idFilter selects the messages whose AMQUserID is one of the quoted ids.
func idFilter(quoted []string) string { return "AMQUserID IN (" + strings.Join(quoted, ", ") + ")" }

// normalizeMessageID gives an id the "ID:" prefix the broker's AMQUserID carries.
func normalizeMessageID(id string) string {
	if strings.HasPrefix(id, "ID:") {
		return id
	}
	return "ID:" + id
}

// Run is one run of a spec: its id and t0, and the broker nodes it is pinned to. A move keeps it
// in its manifest on the source broker, a copy in the ledger.
type Run struct {
	RunID        string    `json:"run_id"`
	T0           time.Time `json:"t0"`
	Spec         Spec      `json:"spec"`
	SourceNodeID string    `json:"source_node_id"`
	TargetNodeID string    `json:"target_node_id"`
	// CopyIdentity is a copy's message identity version, kept for the run's life (0: a move).
	CopyIdentity int `json:"copy_identity,omitempty"`
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

// ModeCopy leaves the source queue untouched and puts an exact copy of the selection on the
// target. It needs a ledger (CopyLedger): the ledger is the record of what was copied.
const ModeCopy Mode = "copy"
