package artemis

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/go-amqp"
)

// Connection errors a caller can test with errors.Is, from messaging (Connect, ConnectTo and
// every link) and, for the first three, from management too. The wrapping error says which
// broker, which URL or queue, and what to do.
var (
	// ErrUnauthorized: the broker refused the credentials (or, with no username, anonymous
	// login), over AMQP (SASL, or amqp:unauthorized-access on open) or management (HTTP 401/403
	// at login). Retrying with the same credentials cannot succeed: correct them.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnreachable: no AMQP connection could be opened (refused, timed out, not AMQP, not TLS),
	// or the management endpoint did not answer or answered without Jolokia (a broker starting).
	// Often temporary: a restarting broker is unreachable for a few seconds, so callers retry
	// within a budget.
	ErrUnreachable = errors.New("unreachable")
	// ErrUntrustedCertificate: the broker's TLS certificate did not verify against the configured
	// CA (or the system roots), or does not name the host. Retrying cannot succeed until the CA
	// or the server name is set.
	ErrUntrustedCertificate = errors.New("untrusted certificate")
	// errConnectionLost: an established connection dropped (broker stopped or killed, network
	// cut). Every link of the connection is dead; reconnect and open new links. Messages received
	// but not yet settled go back to their queue on the broker; sends whose outcome had not
	// arrived have an unknown fate and must be sent again (with a duplicate-detection id). Every
	// such error of a Connection, Receiver, Browser or Sender matches it.
	errConnectionLost = errors.New("connection lost")
)

// Refusals of a live broker a caller can test with errors.Is (and, for an invalid filter,
// errors.As). The broker says them in words and message codes; classifyManagement and
// classifyRemote turn those into these errors where the broker's answer becomes a Go error, so
// that no caller matches broker text. The error text stays the broker's own, after what was being done and on which broker.
var (
	// ErrForbidden: the user is known but may not do this: management answered 403 or a
	// SecurityException (console role or JMX RBAC in etc/management.xml), or a link was refused
	// with amqp:unauthorized-access or AMQ229032 "does not have permission" (security-settings),
	// or a send was rejected so. Retrying cannot succeed until the role is granted.
	ErrForbidden = errors.New("forbidden")
	// errOriginRejected: Jolokia's CORS check refused the Origin header. Set an Origin the
	// broker's etc/jolokia-access.xml allows.
	errOriginRejected = errors.New("origin rejected")
	// ErrNotFound: the queue, address or MBean does not exist (management: HTTP 404 or
	// InstanceNotFoundException; AMQP: amqp:not-found on attach), or no Jolokia answers at the
	// management URL. Create it, or check the name and the URL.
	ErrNotFound = errors.New("not found")
	// errBusy: the broker's management lock stayed taken (AMQ229245 "Management controller is
	// busy with another task") through every retry: another long operation (a large move or
	// count) holds it. Retry later, or with smaller operations.
	errBusy = errors.New("management busy")

	// ErrMaxConsumers: the queue already has as many consumers as its max-consumers allows, so
	// the broker refused another (AMQ229200 "Maximum Consumer Limit Reached", sent as
	// amqp:internal-error when a receiver attaches). Another consumer holds the queue: wait for
	// it to leave (a process that just died holds it until the broker notices its closed
	// connection) or stop it.
	ErrMaxConsumers = errors.New("maximum consumer limit reached")

	// ErrNotImplemented: go-amqp cannot decode (or encode) an AMQP type a message holds: char and
	// decimal32/64/128 values, which JMS map and stream messages may carry. go-amqp closes the
	// link ("amqp:internal-error: char not implemented"); the message was never handed over, so
	// it stays in its queue, and this client cannot move it. Other messages are not affected.
	ErrNotImplemented = errors.New("AMQP type not implemented")

	// errInvalidFilter: the broker refused a filter expression (Core filter or JMS selector) as
	// malformed. The error is a *FilterError, whose Reason is the broker's words. Sending the same
	// expression again cannot succeed: correct it.
	errInvalidFilter = errors.New("invalid filter")

	// ErrWrongNode: the AMQP URLs opened, but on broker nodes other than the one required
	// (Client.ConnectTo). Another node has neither the node's queues nor its duplicate-id cache,
	// so nothing may be sent to or received from it in the node's stead. The error is a
	// *WrongNodeError, which also matches ErrUnreachable: the required node, or a backup sharing
	// its journal, may come back.
	ErrWrongNode = errors.New("wrong broker node")

	// ErrUnsupported: the broker's version has no such management operation (connectors are
	// added and removed through management since Artemis 2.25.0). Upgrading the broker, or
	// configuring the object in its broker.xml, is what helps; retrying cannot.
	ErrUnsupported = errors.New("not supported by this broker version")

	// ErrBridgeExists: a bridge of that name is on the broker already, and was left as it is.
	// Destroy it first, or choose another name.
	ErrBridgeExists = errors.New("bridge exists")

	// ErrBridgeNotDeployed: the broker accepted createBridge but deployed no bridge. It does so
	// without an error when the bridge's queue or one of its connectors is missing, and logs
	// why (AMQ222175 and AMQ222226 for connectors). Create what is missing, then the bridge.
	ErrBridgeNotDeployed = errors.New("bridge not deployed")
)

// ErrRequired is the reason of a ConfigError for a value that is not set and must be: the
// management URL, or the partner of a value that needs one (a password for a username, a key
// for a client certificate and the other way round).
var ErrRequired = errors.New("is required")

// IsConnectionLost reports whether err comes from a connection that dropped, as opposed to a
// refusal by a live broker. After such an error, Close the Connection and connect again. For
// errors of this package it is errors.Is(err, errConnectionLost); it also recognises go-amqp's
// own *amqp.ConnError and *amqp.SessionError, for errors that did not pass through this package.
func IsConnectionLost(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errConnectionLost) {
		return true
	}
	var connErr *amqp.ConnError
	var sessErr *amqp.SessionError
	return errors.As(err, &connErr) || errors.As(err, &sessErr)
}

// FilterError is the broker's refusal of a filter expression: AMQ229020 "Invalid filter" from a
// management operation (countMessages, moveMessages, browse, listMessages), or amqp:invalid-field
// "Invalid filter" when a receiver or browser attaches with a selector. It matches
// errInvalidFilter, and unwraps to the broker's answer.
type FilterError struct {
	// Reason is the broker's words from its message code on, e.g. "AMQ229020: Invalid filter:
	// color IN (" (management; it quotes the expression) or "Invalid filter" (AMQP attach).
	Reason string

	cause error // the broker's whole answer, which Error prints
}

func (e *FilterError) Error() string {
	if e.cause == nil {
		return e.Reason
	}
	return e.cause.Error()
}

// Unwrap returns the broker's answer (for an AMQP attach, an error unwrapping to *amqp.Error).
func (e *FilterError) Unwrap() error { return e.cause }

// Is makes a FilterError match errInvalidFilter.
func (e *FilterError) Is(target error) bool { return target == errInvalidFilter }

// WrongNodeError says which URLs reached which other nodes when node Want was required.
type WrongNodeError struct {
	Broker string // the operator's name for the broker
	Want   string
	Found  []nodeAt
}

func (e *WrongNodeError) Error() string {
	reached := make([]string, len(e.Found))
	for i, f := range e.Found {
		reached[i] = f.URL + " reaches node " + nodeName(f.NodeID)
	}
	return fmt.Sprintf("connecting to broker %q: %s, not node %s, the one required: only that node, or a backup sharing its journal, "+
		"holds the messages and duplicate ids this connection needs", e.Broker, strings.Join(reached, ", "), e.Want)
}

// Is makes a WrongNodeError match ErrWrongNode and ErrUnreachable.
func (e *WrongNodeError) Is(target error) bool {
	return target == ErrWrongNode || target == ErrUnreachable
}

// ConfigError is a Config or TLSOptions value that cannot work, found without contacting the
// broker. It names the field rather than any caller's name for it, so that the caller can point
// at its own attribute.
type ConfigError struct {
	Field string // one of the Field constants
	Index int    // the URL's position in AMQPURLs, for FieldAMQPURLs; else 0
	// Err says why: ErrRequired (possibly wrapped with the partner it is required for), or the
	// reason the value is invalid, which quotes a URL with its password redacted.
	Err error
}

// Error names the endpoint or value in words ("AMQP URL #2: ...", "password is required when a
// username is set").
func (e *ConfigError) Error() string {
	what, ok := fieldWords[e.Field]
	switch {
	case e.Field == FieldAMQPURLs:
		what = fmt.Sprintf("AMQP URL #%d", e.Index+1)
	case !ok:
		what = e.Field
	}
	if errors.Is(e.Err, ErrRequired) {
		return what + " " + e.Err.Error()
	}
	return what + ": " + e.Err.Error()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// OutcomeError is the error of a send that the target broker did not accept. The move engine
// decides from it whether to wait and retry (Retryable) or to stop.
type OutcomeError struct {
	Broker  string // the operator's name for the target broker
	Target  string // the address the sender was attached to (address::queue)
	Outcome Outcome

	// Condition and Description come from a Rejected outcome, e.g. "amqp:resource-limit-exceeded".
	Condition   string
	Description string

	// DeliveryFailed and UndeliverableHere come from a Modified outcome.
	DeliveryFailed    bool
	UndeliverableHere bool
}

// Error names broker, target, outcome and condition, and for the conditions Artemis uses says
// what to do.
func (e *OutcomeError) Error() string {
	switch e.Outcome {
	case OutcomeRejected:
		msg := fmt.Sprintf("broker %q rejected a message sent to %s", e.Broker, e.Target)
		if e.Condition != "" {
			msg += ": " + e.Condition
		}
		if e.Description != "" {
			msg += ": " + e.Description
		}
		switch e.Condition {
		case conditionResourceLimitExceeded:
			msg += " (the address is full: wait for consumers or raise its max-size)"
		case conditionUnauthorizedAccess:
			msg += " (grant the user the send permission on this address)"
		}
		return msg
	case OutcomeModified:
		return fmt.Sprintf("broker %q did not take a message sent to %s (modified, delivery-failed=%t, undeliverable-here=%t)",
			e.Broker, e.Target, e.DeliveryFailed, e.UndeliverableHere)
	default:
		return fmt.Sprintf("broker %q did not take a message sent to %s (%s)", e.Broker, e.Target, e.Outcome)
	}
}

// Retryable reports whether sending the same message again later may succeed: true for
// Released, Modified and a full address; false for any other rejection (permissions, invalid
// message), which needs an operator.
func (e *OutcomeError) Retryable() bool {
	switch e.Outcome {
	case OutcomeReleased, OutcomeModified:
		return true
	case OutcomeRejected:
		return e.Condition == conditionResourceLimitExceeded
	default:
		return true
	}
}

// Is makes a rejection for amqp:unauthorized-access match ErrForbidden: the user is known but
// may not send there.
func (e *OutcomeError) Is(target error) bool {
	return target == ErrForbidden && e.Outcome == OutcomeRejected && e.Condition == conditionUnauthorizedAccess
}

// QueueInUseError is DeleteEmptyQueue's refusal: the queue holds messages, or producers are
// attached to it, so it was left in place as it was.
type QueueInUseError struct {
	Broker, Queue, Address string
	// Stored is what the queue held at the check that refused.
	Stored StoredMessages
	// Producers is how many producers were attached to the queue's address or to the queue.
	Producers int
}

func (e *QueueInUseError) Error() string {
	var why []string
	switch {
	case e.Stored.Counted > 0:
		why = append(why, fmt.Sprintf("holds %d message(s)", e.Stored.Counted))
	case e.Stored.Listed > 0:
		why = append(why, fmt.Sprintf("holds %d message(s) that its message count misses", e.Stored.Listed))
	}
	if e.Producers > 0 {
		why = append(why, fmt.Sprintf("has %d producer(s) attached to address %q or to the queue", e.Producers, e.Address))
	}
	return fmt.Sprintf("broker %q: queue %q %s; it was not deleted, and is kept as it was", e.Broker, e.Queue, strings.Join(why, " and "))
}

// Messages is how many messages the queue held at the check that refused.
func (e *QueueInUseError) Messages() int64 {
	if e.Stored.Counted > 0 {
		return e.Stored.Counted
	}
	return int64(e.Stored.Listed)
}
