package artemis

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"

	"github.com/Azure/go-amqp"
)

// Here answers become this package's errors (the sentinels and types it exports): the broker's
// refusals, which it says only in words and message codes, go-amqp's errors that have no type,
// and TLS failures, by crypto/tls's and crypto/x509's types. Nowhere else is an error told by
// its text.

// classified lets an error match a sentinel without changing its text, so that the broker's
// words read as before.
type classified struct {
	err  error
	kind error
}

func (e *classified) Error() string   { return e.err.Error() }
func (e *classified) Unwrap() []error { return []error{e.err, e.kind} }

// errQueueMissing marks a management operation the broker refused with AMQ229017 "Queue ...
// does not exist". It is not ErrNotFound: the queue missing may be another than the MBean's (a
// move's target), so only the caller knows what it means (DestroyQueue: its queue is gone).
var errQueueMissing = errors.New("queue does not exist")

// Markers of the broker's refusals. Artemis 2.31 and 2.40 word them alike.
var (
	maxConsumersMarkers = []string{"AMQ229200", "Maximum Consumer Limit"}
	// AMQ229020 comes from management operations, "Invalid filter" alone from an AMQP attach;
	// the exception names cover a parser error reported without the message code.
	invalidFilterMarkers = []string{"AMQ229020", "Invalid filter", "FilterException", "ParseException"}
)

const (
	// busyCode is the broker's message code for "Management controller is busy with another task".
	busyCode = "AMQ229245"
	// noPermissionCode is AMQ229032 "does not have permission", which also arrives as
	// amqp:internal-error when an attach would have to auto-create the address.
	noPermissionCode = "AMQ229032"
	// queueMissingCode is AMQ229017 "Queue ... does not exist" from a management operation.
	queueMissingCode = "AMQ229017"
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
// from a dropped connection with errConnectionLost, refusals with ErrForbidden, ErrNotFound,
// ErrMaxConsumers or errInvalidFilter (a *FilterError), and a message go-amqp cannot decode
// with ErrNotImplemented.
func (c *Connection) linkError(what string, err error) error {
	if IsConnectionLost(err) {
		return fmt.Errorf("%s on broker %q: %w: %w", what, c.Broker(), errConnectionLost, err)
	}
	var amqpErr *amqp.Error
	if errors.As(err, &amqpErr) {
		remote := &remoteError{amqpErr}
		user := c.client.cfg.Username
		switch {
		case amqpErr.Condition == amqp.ErrCondUnauthorizedAccess || strings.Contains(amqpErr.Description, noPermissionCode):
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

// saslRefusal tells the two ways go-amqp reports a failed SASL exchange, which it does only in
// text (fmt.Errorf, no type): refused reports a SASL outcome other than ok (a refused login),
// noMechanism a broker offering no mechanism this client has.
func saslRefusal(err error) (refused, noMechanism bool) {
	msg := err.Error()
	return strings.Contains(msg, "SASL") && strings.Contains(msg, "auth failed"),
		strings.Contains(msg, "no supported auth mechanism")
}

// managementRefusal gives a failed Jolokia response the refusal it stands for, by its status
// and the broker's exception: ErrNotFound, ErrForbidden or errBusy; nil for any other failure.
func managementRefusal(r jolokiaResponse) error {
	switch {
	case r.Status == http.StatusNotFound || strings.Contains(r.ErrorType, "InstanceNotFoundException"):
		return ErrNotFound
	case r.Status == http.StatusForbidden || strings.Contains(r.ErrorType, "SecurityException"):
		return ErrForbidden
	case strings.Contains(r.Error, busyCode):
		return errBusy
	}
	return nil
}

// classifyManagement gives a failed management operation's error text (without its Java class,
// see cleanJavaError) the error it stands for, or nil when it is no refusal this package names.
// Missing MBeans, permissions and the busy lock are told apart by managementRefusal first.
func classifyManagement(text string) error {
	if reason, ok := filterReason(text); ok {
		return &FilterError{Reason: reason, cause: errors.New(text)}
	}
	if strings.Contains(text, queueMissingCode) {
		return &classified{err: errors.New(text), kind: errQueueMissing}
	}
	return nil
}

// cleanJavaError drops the Java exception class prefix Jolokia puts before the message.
func cleanJavaError(s string) string {
	if i := strings.Index(s, " : "); i > 0 && !strings.Contains(s[:i], " ") {
		return s[i+3:]
	}
	return s
}

// attributeRefusal gives an attribute value a read with ignoreErrors returned in the
// attribute's place the refusal it stands for: ErrForbidden when the user's role may not read
// it (JMX RBAC, get*/is*), ErrNotFound when the broker has no such attribute (an older
// version); nil for a value.
func attributeRefusal(value string) error {
	switch {
	case strings.HasPrefix(value, "ERROR:") && strings.Contains(value, "SecurityException"):
		return ErrForbidden
	case strings.Contains(value, "AttributeNotFoundException"):
		return ErrNotFound
	}
	return nil
}

// originRefused reports whether the body of a refused management request is Jolokia's CORS
// refusal of the Origin header (the only refusal that carries a body).
func originRefused(body string) bool {
	return strings.Contains(body, "Origin") && strings.Contains(body, "not allowed")
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// untrustedCertificate reports whether a TLS handshake failed because the broker's certificate
// did not verify: not signed by a trusted CA, not for this host name, expired or otherwise
// invalid.
func untrustedCertificate(err error) bool {
	var verifyErr *tls.CertificateVerificationError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	return errors.As(err, &verifyErr) || errors.As(err, &authErr) || errors.As(err, &hostErr) || errors.As(err, &invalidErr)
}

// certificateAlerts are the TLS alerts (RFC 8446 section 6.2) about a certificate.
var certificateAlerts = map[tls.AlertError]bool{
	42: true, 43: true, 44: true, 45: true, 46: true, // bad, unsupported, revoked, expired, unknown certificate
	48:  true, // unknown certificate authority
	111: true, // certificate unobtainable
	113: true, // bad certificate status response
	114: true, // bad certificate hash value
	116: true, // certificate required
}

// certificateAlert reports whether a TLS handshake ended with an alert about a certificate:
// sent by this client (crypto/tls wraps a tls.AlertError into the handshake's error), or
// received from the server, which refused this client's certificate or its lack of one. A
// received alert comes as a *net.OpError "remote error" around crypto/tls's unexported alert
// type, a uint8 holding the alert's number, which is read here by its kind.
func certificateAlert(err error) bool {
	var sent tls.AlertError
	if errors.As(err, &sent) {
		return certificateAlerts[sent]
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) || opErr.Op != "remote error" || opErr.Err == nil {
		return false
	}
	v := reflect.ValueOf(opErr.Err)
	return v.Kind() == reflect.Uint8 && v.Type().PkgPath() == "crypto/tls" && certificateAlerts[tls.AlertError(v.Uint())]
}

// notTLS reports whether the server answered a TLS handshake with something that is not TLS:
// crypto/tls gives the connection along (RecordHeaderError.Conn) only when the first record
// does not look like a TLS handshake.
func notTLS(err error) bool {
	var headerErr tls.RecordHeaderError
	return errors.As(err, &headerErr) && headerErr.Conn != nil
}
