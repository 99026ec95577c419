package artemis

import (
	"errors"
	"strings"

	"github.com/Azure/go-amqp"
)

// Refusals a caller can test with errors.Is (and, for an invalid filter, errors.As). The broker
// says them in words and message codes; this package turns those into these errors where the
// broker's answer becomes a Go error (linkError, responseError), so that no caller matches
// broker text. The error text stays the broker's own, after what was being done and on which
// broker.
var (
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

	// ErrInvalidFilter: the broker refused a filter expression (Core filter or JMS selector) as
	// malformed. The error is a *FilterError, whose Reason is the broker's words. Sending the same
	// expression again cannot succeed: correct it.
	ErrInvalidFilter = errors.New("invalid filter")
)

// FilterError is the broker's refusal of a filter expression: AMQ229020 "Invalid filter" from a
// management operation (countMessages, moveMessages, browse, listMessages), or amqp:invalid-field
// "Invalid filter" when a receiver or browser attaches with a selector. It matches
// ErrInvalidFilter, and unwraps to the broker's answer.
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

// Is makes a FilterError match ErrInvalidFilter.
func (e *FilterError) Is(target error) bool { return target == ErrInvalidFilter }

// classified lets an error match a sentinel without changing its text, so that the broker's
// words read as before.
type classified struct {
	err  error
	kind error
}

func (e *classified) Error() string   { return e.err.Error() }
func (e *classified) Unwrap() []error { return []error{e.err, e.kind} }

// Markers of the broker's refusals. Artemis 2.31 and 2.40 word them alike.
var (
	maxConsumersMarkers = []string{"AMQ229200", "Maximum Consumer Limit"}
	// AMQ229020 comes from management operations, "Invalid filter" alone from an AMQP attach;
	// the exception names cover a parser error reported without the message code.
	invalidFilterMarkers = []string{"AMQ229020", "Invalid filter", "FilterException", "ParseException"}
)

// filterReason returns the broker's refusal of a filter from its first marker on, and whether
// text is such a refusal.
func filterReason(text string) (string, bool) {
	for _, marker := range invalidFilterMarkers {
		if i := strings.Index(text, marker); i >= 0 {
			return text[i:], true
		}
	}
	return "", false
}

// classifyRemote gives an error the broker sent on a link (remote wraps amqpErr) the sentinel it
// stands for, or returns remote unchanged. Permissions and missing queues are told apart in
// linkError, whose message says what to do.
func classifyRemote(amqpErr *amqp.Error, remote error) error {
	switch {
	case containsAny(amqpErr.Description, maxConsumersMarkers...):
		return &classified{err: remote, kind: ErrMaxConsumers}
	case amqpErr.Condition == amqp.ErrCondInvalidField:
		if reason, ok := filterReason(amqpErr.Description); ok {
			return &FilterError{Reason: reason, cause: remote}
		}
	}
	return remote
}

// classifyLocal gives an error go-amqp raised itself (no broker error in it) the sentinel it
// stands for, or returns err unchanged. go-amqp reports a type it cannot decode only in text, in
// a *amqp.LinkError whose cause is unexported.
func classifyLocal(err error) error {
	if strings.Contains(err.Error(), "not implemented") {
		return &classified{err: err, kind: ErrNotImplemented}
	}
	return err
}

// classifyManagement gives a failed management operation's error text (without its Java class,
// see cleanJavaError) the error it stands for, or nil when it is no refusal this package names.
// Missing MBeans, permissions and the busy lock are told apart in responseError by status too.
func classifyManagement(text string) error {
	if reason, ok := filterReason(text); ok {
		return &FilterError{Reason: reason, cause: errors.New(text)}
	}
	return nil
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
