package preflight

import (
	"sort"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Severity says whether a Finding refuses the transfer.
type Severity int

const (
	// Error refuses the transfer: running it would lose, duplicate or misroute messages, or
	// cannot work at all. It is the zero value, so an unset Severity refuses.
	Error Severity = iota
	// Warning lets the transfer run; a reviewer must act on it, or know it, before applying:
	// what the plan could not prove, what the run will do otherwise than asked, what to fix.
	Warning
	// Note lets the transfer run and asks nothing of the reviewer (how many messages are
	// selected now, how every transfer works): the provider logs it rather than warn, so that
	// a plan's warnings stay the ones to act on.
	Note
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	case Note:
		return "note"
	default:
		return "unknown severity"
	}
}

// Finding is one result of Check, shaped to become one Terraform diagnostic.
type Finding struct {
	Severity Severity
	// Attribute is the Terraform attribute at fault ("target.queue", "source.queue",
	// "target.broker", "filter", "message_ids", "batch_size"); empty for the whole resource.
	Attribute string
	// Summary is one short line, without the values.
	Summary string
	// Detail says what was found, with the values, why it matters for the messages, and what
	// the operator can do.
	Detail string
	// Explanation marks a warning that explains how every transfer of its kind works rather
	// than something found on these brokers: a plan of many transfers shows it once.
	Explanation bool
}

// Endpoint is a queue on a broker, both named as the operator configured them.
type Endpoint struct{ Broker, Queue string }

// The selection kinds, as core.Selection.Kind names them.
const (
	selectWholeQueue = "whole queue"
	selectFilter     = "filter"
	selectMessageIDs = "message ids"
)

// DedupOutcome is what a duplicate-detection canary on the target showed.
type DedupOutcome int

const (
	// DedupUnknown: the canary did not run or gave no answer.
	DedupUnknown DedupOutcome = iota
	// DedupWorks: a repeated _AMQ_DUPL_ID was discarded.
	DedupWorks
	// DedupDisabled: a repeated _AMQ_DUPL_ID was stored twice.
	DedupDisabled
	// DedupSkipped: the canary was not sent, since the plan may not write (SkippedWriteChecks
	// says so).
	DedupSkipped
	// DedupDiscarded: the target accepted the canary, sent as the relay sends to a queue of the
	// target queue's routing type, and stored no copy of it: what the relay sends there would
	// be lost.
	DedupDiscarded
)

// DuplicateProbe is the result of the duplicate-detection canary on the target.
type DuplicateProbe struct {
	Outcome DedupOutcome
	// Routing is the routing type of the canary's queue: the target queue's.
	Routing string
	// Detail is what the probe saw or why it could not tell; quoted in the finding.
	Detail string
}

// PermissionProblem is an operation a probe found the configured user may not perform.
type PermissionProblem struct {
	Broker    string // the broker's configured name
	What      string // the denied operation, e.g. "send to orders::orders"
	Attribute string // the Terraform attribute the operation serves, e.g. "target.queue"
	Detail    string // what the broker answered
}

// ConnectionProblem is a broker the probes could not open an AMQP connection to: unreachable,
// refused credentials, an untrusted certificate. It is not a missing permission.
type ConnectionProblem struct {
	Broker    string // the broker's configured name
	Attribute string // "source.broker" or "target.broker"
	Detail    string // why, as the client says it (with what to do)
}

// UnfinishedRun is a run of the same transfer whose staging queue still exists.
type UnfinishedRun struct {
	RunID  string
	Staged int64     // messages in its staging queue now
	T0     time.Time // the run's start time, which freezes its selection
}

// Facts is everything Check needs, read from both brokers at plan time. Counts use -1 for
// unknown.
type Facts struct {
	Source, Target             Endpoint
	SourceBroker, TargetBroker artemis.BrokerInfo
	// SourceQueue and TargetQueue are nil when the queue does not exist.
	SourceQueue, TargetQueue *artemis.QueueInfo
	// TargetSettings are the effective address settings of the target queue's address; they
	// are only read when TargetQueue is non-nil.
	TargetSettings artemis.AddressSettings
	// TargetUsage is how full the target address is now; nil when unknown.
	TargetUsage *artemis.AddressUsage
	// TargetMemory is the target broker's heap and global paging limit; nil when unknown.
	TargetMemory *TargetMemory
	// TargetDiverts are the diverts that apply to the target queue's address; read only when
	// TargetQueue is non-nil.
	TargetDiverts []artemis.Divert

	// SelectionKind is selectWholeQueue, selectFilter or selectMessageIDs; empty means the
	// whole queue.
	SelectionKind string
	// SelectionCount is how many messages the selection holds now (an estimate); -1 unknown.
	SelectionCount int64
	// SelectionCountCapped is true when the broker capped a filtered count
	// (management-browse-page-size, 200 by default): SelectionCount is then a lower bound.
	SelectionCountCapped bool
	// SelectionCountUpperBound is true when SelectionCount is the length of a message id list too
	// long to count: at most that many are selected.
	SelectionCountUpperBound bool
	// FilterError is the broker's parse error for the filter; empty when it is valid or there
	// is no filter.
	FilterError string

	// InFlightWindow is batch_size: the relay keeps up to two batches sent and awaiting their
	// confirmations. 0 or less skips the window check.
	InFlightWindow int
	// TargetRelays are the runs of this provider sending to the target queue now (their relay
	// links on the target broker); they share its duplicate-id cache with this one. Read only
	// when TargetQueue is non-nil; nil when the producer list cannot be read.
	TargetRelays []TargetRelay
	// DuplicateDetection is the result of the duplicate-detection canary on the target.
	DuplicateDetection DuplicateProbe
	// PermissionProblems are the operations the probes found denied, in the caller's order.
	PermissionProblems []PermissionProblem
	// ConnectionProblems are the brokers the probes could not connect to over AMQP.
	ConnectionProblems []ConnectionProblem
	// SkippedWriteChecks name the checks that need writes and were not made, because the plan
	// runs as a user who may only read and browse; apply makes them before anything moves.
	SkippedWriteChecks []string
	// UnfinishedRun is an unfinished run of this same transfer; nil when there is none.
	UnfinishedRun *UnfinishedRun

	// ExpiringMessages is how many selected messages carry an expiry; -1 unknown.
	ExpiringMessages int64
	// ExpiryPreserved says whether the engine carries each message's expiry over to the
	// target. When false, the broker-side move into staging clears it.
	ExpiryPreserved bool
	// ScheduledMessages is how many scheduled messages the source queue holds; -1 unknown.
	ScheduledMessages int64
	// SourceURLNodes and TargetURLNodes are the nodes each AMQP URL of the brokers reaches, in
	// the configured order; nil when not probed.
	SourceURLNodes, TargetURLNodes []artemis.URLNode
}

// Check applies every rule to f and returns the findings: errors first, then warnings, each
// group in a fixed rule order, so the same facts always give the same list.
func Check(f Facts) []Finding {
	return bySeverity(applyRules(f, false))
}

// applyRules applies the rules to f in their fixed order, unsorted. forCopy leaves out the
// rules whose wording is a move's: CheckCopy says those in a copy's own words.
func applyRules(f Facts, forCopy bool) []Finding {
	var out []Finding
	for _, r := range []struct {
		apply    func(Facts) []Finding
		moveOnly bool
	}{
		{apply: brokersSupported},
		{apply: queuesExist},
		{apply: notSameQueue},
		{apply: filterParses},
		{apply: targetQueueKeepsMessages},
		{apply: targetAddressKeepsMessages},
		{apply: targetNotDiverted},
		{apply: targetExpiry},
		{apply: targetBrokerPersists},
		{apply: duplicateDetectionHolds},
		{apply: brokersConnect},
		{apply: permissionsGranted},
		{apply: writeChecksSkipped},
		{apply: unfinishedRun},
		{apply: selectionSize},
		{apply: selectionFrozenAtStart},
		{apply: sourceConsumers, moveOnly: true},
		{apply: scheduledMessages, moveOnly: true},
		{apply: expiringMessages},
		{apply: expiringWithoutExpiryAddress},
		{apply: amqpForm},
		{apply: targetNearlyFull},
		{apply: targetHeapHoldsPaging},
		{apply: amqpURLsReachManagementNode},
	} {
		if forCopy && r.moveOnly {
			continue
		}
		out = append(out, r.apply(f)...)
	}
	return out
}

// bySeverity puts errors before warnings and keeps the order within each.
func bySeverity(findings []Finding) []Finding {
	sort.SliceStable(findings, func(i, j int) bool { return findings[i].Severity < findings[j].Severity })
	return findings
}

// HasErrors reports whether any finding refuses the transfer.
func HasErrors(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

// TargetRelay is a run of this provider whose relay sends to the target queue.
type TargetRelay struct {
	RunID string
	// Batch is its batch_size: it may have two batches awaiting confirmation.
	Batch int
}
