package artemis

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/go-amqp"
)

// Connection errors a caller can test with errors.Is, from messaging (Connect, Reconnect and
// every link) and, for the first three, from management too. The wrapping error says which
// broker, which URL or queue, and what to do. The refusals of a live broker are in
// broker_errors.go (and ErrForbidden, ErrNotFound, ErrBusy in jolokia.go, ErrWrongNode in
// node.go).
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
	// ErrConnectionLost: an established connection dropped (broker stopped or killed, network
	// cut). Every link of the connection is dead; Reconnect and open new links. Messages received
	// but not yet settled go back to their queue on the broker; sends whose outcome had not
	// arrived have an unknown fate and must be sent again (with a duplicate-detection id). Every
	// such error of a Connection, Receiver, Browser or Sender matches it.
	ErrConnectionLost = errors.New("connection lost")
)

// IsConnectionLost reports whether err comes from a connection that dropped, as opposed to a
// refusal by a live broker. After such an error, call Connection.Reconnect. For errors of this
// package it is errors.Is(err, ErrConnectionLost); it also recognises go-amqp's own
// *amqp.ConnError and *amqp.SessionError, for errors that did not pass through this package.
func IsConnectionLost(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrConnectionLost) {
		return true
	}
	var connErr *amqp.ConnError
	var sessErr *amqp.SessionError
	return errors.As(err, &connErr) || errors.As(err, &sessErr)
}

// Outcome is how the receiving broker settled a message sent to it.
type Outcome int

const (
	// OutcomeUnknown: no outcome arrived (connection lost, sender closed). The message may or
	// may not be on the target; send it again with the same duplicate-detection id.
	OutcomeUnknown Outcome = iota
	// OutcomeAccepted: the broker stored the message (for a durable message: after its journal
	// write). Only now may the source copy be acknowledged.
	OutcomeAccepted
	// OutcomeRejected: the broker refused the message; the error condition says why.
	OutcomeRejected
	// OutcomeReleased: the broker did not process the message; it may be sent again.
	OutcomeReleased
	// OutcomeModified: like Released, with hints (delivery-failed, undeliverable-here).
	OutcomeModified
)

// String is the AMQP name of the outcome, as used in errors and logs.
func (o Outcome) String() string {
	switch o {
	case OutcomeAccepted:
		return "accepted"
	case OutcomeRejected:
		return "rejected"
	case OutcomeReleased:
		return "released"
	case OutcomeModified:
		return "modified"
	default:
		return "unknown"
	}
}

// Well-known AMQP error conditions Artemis puts on a Rejected outcome.
const (
	// ConditionResourceLimitExceeded: the target address is full (address-full-policy FAIL, or
	// BLOCK past its reject threshold). Waiting for consumers to make room and retrying helps.
	ConditionResourceLimitExceeded = string(amqp.ErrCondResourceLimitExceeded)
	// ConditionUnauthorizedAccess: the user may not send to this address. Retrying does not help.
	ConditionUnauthorizedAccess = string(amqp.ErrCondUnauthorizedAccess)
)

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
		case ConditionResourceLimitExceeded:
			msg += " (the address is full: wait for consumers or raise its max-size)"
		case ConditionUnauthorizedAccess:
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
		return e.Condition == ConditionResourceLimitExceeded
	default:
		return true
	}
}

// Is makes a rejection for amqp:unauthorized-access match ErrForbidden: the user is known but
// may not send there.
func (e *OutcomeError) Is(target error) bool {
	return target == ErrForbidden && e.Outcome == OutcomeRejected && e.Condition == ConditionUnauthorizedAccess
}

// remoteError prints an error the broker sent as "condition: description" (go-amqp prints its
// Go struct) and still unwraps to the *amqp.Error.
type remoteError struct{ err *amqp.Error }

func (e *remoteError) Error() string {
	if e.err.Description == "" {
		return string(e.err.Condition)
	}
	return string(e.err.Condition) + ": " + e.err.Description
}

func (e *remoteError) Unwrap() error { return e.err }

// linkError wraps an error of a link operation with what was being done, and marks errors
// from a dropped connection with ErrConnectionLost, refusals with ErrForbidden, ErrNotFound,
// ErrMaxConsumers or ErrInvalidFilter (a *FilterError), and a message go-amqp cannot decode
// with ErrNotImplemented.
func (c *Connection) linkError(what string, err error) error {
	if IsConnectionLost(err) {
		return fmt.Errorf("%s on broker %q: %w: %w", what, c.Broker(), ErrConnectionLost, err)
	}
	var amqpErr *amqp.Error
	if errors.As(err, &amqpErr) {
		remote := &remoteError{amqpErr}
		user := c.client.cfg.Username
		switch {
		case amqpErr.Condition == amqp.ErrCondUnauthorizedAccess || strings.Contains(amqpErr.Description, "AMQ229032"):
			// AMQ229032 "does not have permission" also arrives as amqp:internal-error when
			// an attach would have to auto-create the address.
			return fmt.Errorf("%s on broker %q: user %q lacks a permission (grant it in the broker's security-settings): %w: %w",
				what, c.Broker(), user, ErrForbidden, remote)
		case amqpErr.Condition == amqp.ErrCondNotFound:
			return fmt.Errorf("%s on broker %q: %w: %w", what, c.Broker(), ErrNotFound, remote)
		default:
			return fmt.Errorf("%s on broker %q: %w", what, c.Broker(), classifyRemote(amqpErr, remote))
		}
	}
	return fmt.Errorf("%s on broker %q: %w", what, c.Broker(), classifyLocal(err))
}
