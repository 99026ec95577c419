package artemis

import (
	"errors"
	"testing"

	"github.com/Azure/go-amqp"
)

// sentinels are every error a caller may test with errors.Is; each case below must match exactly
// the ones it names.
var sentinels = map[string]error{
	"ErrMaxConsumers":         ErrMaxConsumers,
	"ErrNotImplemented":       ErrNotImplemented,
	"errInvalidFilter":        errInvalidFilter,
	"ErrNotFound":             ErrNotFound,
	"ErrForbidden":            ErrForbidden,
	"errBusy":                 errBusy,
	"errConnectionLost":       errConnectionLost,
	"ErrUnreachable":          ErrUnreachable,
	"ErrUnauthorized":         ErrUnauthorized,
	"ErrUntrustedCertificate": ErrUntrustedCertificate,
	"ErrWrongNode":            ErrWrongNode,
}

// checkClassified fails unless err matches exactly the sentinels want, reads text, and (for an
// invalid filter) carries reason.
func checkClassified(t *testing.T, err error, text string, reason string, want ...string) {
	t.Helper()
	if err.Error() != text {
		t.Errorf("text:\n got %s\nwant %s", err, text)
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	for name, sentinel := range sentinels {
		if got := errors.Is(err, sentinel); got != wanted[name] {
			t.Errorf("errors.Is(err, %s) = %t, want %t", name, got, wanted[name])
		}
	}
	var fe *FilterError
	switch {
	case errors.As(err, &fe) != (reason != ""):
		t.Errorf("errors.As(err, *FilterError) = %t, want %t", fe != nil, reason != "")
	case fe != nil && fe.Reason != reason:
		t.Errorf("FilterError.Reason = %q, want %q", fe.Reason, reason)
	}
}

// The texts are what Artemis 2.40.0 and 2.31.2 (alike) answered on the test environment: a second
// receiver on a max-consumers=1 queue, a malformed selector on attach, the transfer user on a
// queue it may not consume and an address it may not create, a queue missing from its address,
// a JMS map message with a char entry (go-amqp's own error), and a dropped connection.
func TestLinkError_ClassifiesBrokerRefusals(t *testing.T) {
	c := &Connection{client: &Client{cfg: Config{Name: "source", Username: "transfer"}}}
	remote := func(cond amqp.ErrCond, desc string) error {
		return &amqp.LinkError{RemoteErr: &amqp.Error{Condition: cond, Description: desc}}
	}
	for _, tc := range []struct {
		name   string
		what   string
		err    error
		text   string
		reason string
		want   []string
	}{
		{
			name: "max consumers",
			what: "opening a receiver on q::q",
			err:  remote(amqp.ErrCondInternalError, "AMQ119005: error creating consumer, AMQ229200: Maximum Consumer Limit Reached on Queue:(address=q,queue=q)"),
			text: `opening a receiver on q::q on broker "source": amqp:internal-error: AMQ119005: error creating consumer, AMQ229200: Maximum Consumer Limit Reached on Queue:(address=q,queue=q)`,
			want: []string{"ErrMaxConsumers"},
		},
		{
			name:   "invalid selector",
			what:   "opening a browser on q::q",
			err:    remote(amqp.ErrCondInvalidField, "Invalid filter"),
			text:   `opening a browser on q::q on broker "source": amqp:invalid-field: Invalid filter`,
			reason: "Invalid filter",
			want:   []string{"errInvalidFilter"},
		},
		{
			name: "consume not granted",
			what: "opening a receiver on q::q",
			err:  remote(amqp.ErrCondUnauthorizedAccess, "AMQ119015: not authorized to create consumer, AMQ229213: User: transfer does not have permission='CONSUME' for queue q on address q"),
			text: `opening a receiver on q::q on broker "source": user "transfer" lacks a permission (grant it in the broker's security-settings): forbidden: ` +
				`amqp:unauthorized-access: AMQ119015: not authorized to create consumer, AMQ229213: User: transfer does not have permission='CONSUME' for queue q on address q`,
			want: []string{"ErrForbidden"},
		},
		{
			name: "address creation not granted",
			what: "opening a sender to nope.x",
			err:  remote(amqp.ErrCondInternalError, "AMQ229032: User: transfer does not have permission='CREATE_ADDRESS' on address nope.x"),
			text: `opening a sender to nope.x on broker "source": user "transfer" lacks a permission (grant it in the broker's security-settings): forbidden: ` +
				`amqp:internal-error: AMQ229032: User: transfer does not have permission='CREATE_ADDRESS' on address nope.x`,
			want: []string{"ErrForbidden"},
		},
		{
			name: "missing queue",
			what: "opening a receiver on nope::q",
			err:  remote(amqp.ErrCondNotFound, "Queue: 'q' does not exist for address 'nope'"),
			text: `opening a receiver on nope::q on broker "source": not found: amqp:not-found: Queue: 'q' does not exist for address 'nope'`,
			want: []string{"ErrNotFound"},
		},
		{
			// go-amqp closes the link with this text in an *amqp.LinkError whose cause is
			// unexported, so the test gives the text alone.
			name: "undecodable char",
			what: "receiving from q::q",
			err:  errors.New("amqp:internal-error: char not implemented"),
			text: `receiving from q::q on broker "source": amqp:internal-error: char not implemented`,
			want: []string{"ErrNotImplemented"},
		},
		{
			name: "dropped connection",
			what: "receiving from q::q",
			err:  &amqp.ConnError{},
			text: `receiving from q::q on broker "source": connection lost: amqp: connection closed`,
			want: []string{"errConnectionLost"},
		},
		{
			name: "another refusal",
			what: "opening a receiver on q::q",
			err:  remote(amqp.ErrCondInternalError, "AMQ119005: error creating consumer, something else"),
			text: `opening a receiver on q::q on broker "source": amqp:internal-error: AMQ119005: error creating consumer, something else`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkClassified(t, c.linkError(tc.what, tc.err), tc.text, tc.reason, tc.want...)
		})
	}
}

// The responses are what Jolokia answered on Artemis 2.40.0 and 2.31.2 (alike): malformed filters
// given to countMessages, moveMessages and browse, a queue MBean that does not exist, an
// operation the user's role lacks, the busy management lock, and a queue destroyQueue did not
// find (which DestroyQueue, not responseError, tells apart).
func TestResponseError_ClassifiesBrokerRefusals(t *testing.T) {
	c := &Client{cfg: Config{Name: "source", Username: "transfer"}}
	const invalidFilter = "org.apache.activemq.artemis.api.core.ActiveMQInvalidFilterExpressionException"
	for _, tc := range []struct {
		name   string
		what   string
		resp   jolokiaResponse
		text   string
		reason string
		want   []string
	}{
		{
			name:   "countMessages with a malformed filter",
			what:   "calling countMessages(java.lang.String)",
			resp:   jolokiaResponse{Status: 500, ErrorType: invalidFilter, Error: invalidFilter + " : AMQ229020: Invalid filter: a = = 'b"},
			text:   `broker "source": calling countMessages(java.lang.String): AMQ229020: Invalid filter: a = = 'b`,
			reason: "AMQ229020: Invalid filter: a = = 'b",
			want:   []string{"errInvalidFilter"},
		},
		{
			name:   "moveMessages with a malformed filter",
			what:   "calling moveMessages(int,java.lang.String,java.lang.String,boolean,int)",
			resp:   jolokiaResponse{Status: 500, ErrorType: invalidFilter, Error: invalidFilter + " : AMQ229020: Invalid filter: color IN ("},
			text:   `broker "source": calling moveMessages(int,java.lang.String,java.lang.String,boolean,int): AMQ229020: Invalid filter: color IN (`,
			reason: "AMQ229020: Invalid filter: color IN (",
			want:   []string{"errInvalidFilter"},
		},
		{
			name:   "browse with a malformed filter",
			what:   "calling browse(int,int,java.lang.String)",
			resp:   jolokiaResponse{Status: 500, ErrorType: "java.lang.IllegalStateException", Error: "java.lang.IllegalStateException : AMQ229020: Invalid filter: x LIKE"},
			text:   `broker "source": calling browse(int,int,java.lang.String): AMQ229020: Invalid filter: x LIKE`,
			reason: "AMQ229020: Invalid filter: x LIKE",
			want:   []string{"errInvalidFilter"},
		},
		{
			name: "missing queue MBean",
			what: "calling countMessages(java.lang.String)",
			resp: jolokiaResponse{Status: 404, ErrorType: "javax.management.InstanceNotFoundException",
				Error: `javax.management.InstanceNotFoundException : org.apache.activemq.artemis:broker="source",component=addresses,address="no.such",subcomponent=queues,routing-type="anycast",queue="no.such"`},
			text: `broker "source": calling countMessages(java.lang.String): not found`,
			want: []string{"ErrNotFound"},
		},
		{
			name: "operation not granted",
			what: "calling pause()",
			resp: jolokiaResponse{Status: 403, ErrorType: "java.lang.Exception", Error: "java.lang.Exception : User not authorized to access operation: pause"},
			text: `broker "source": user "transfer" lacks the right for calling pause() (grant the operation to the user's role in etc/management.xml): forbidden`,
			want: []string{"ErrForbidden"},
		},
		{
			name: "busy management lock",
			what: "calling countMessages(java.lang.String)",
			resp: jolokiaResponse{Status: 500, ErrorType: "org.apache.activemq.artemis.api.core.ActiveMQTimeoutException",
				Error: "org.apache.activemq.artemis.api.core.ActiveMQTimeoutException : AMQ229245: Management controller is busy with another task. Please try again"},
			text: `broker "source": calling countMessages(java.lang.String): org.apache.activemq.artemis.api.core.ActiveMQTimeoutException : ` +
				`AMQ229245: Management controller is busy with another task. Please try again: management busy`,
			want: []string{"errBusy"},
		},
		{
			name: "another failure",
			what: "calling destroyQueue(java.lang.String)",
			resp: jolokiaResponse{Status: 500, ErrorType: "org.apache.activemq.artemis.api.core.ActiveMQNonExistentQueueException",
				Error: "org.apache.activemq.artemis.api.core.ActiveMQNonExistentQueueException : AMQ229017: Queue nothing.here does not exist"},
			text: `broker "source": calling destroyQueue(java.lang.String): AMQ229017: Queue nothing.here does not exist`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkClassified(t, c.responseError(tc.what, tc.resp), tc.text, tc.reason, tc.want...)
		})
	}
}

// filterReason keeps what the transfer engine showed of a refused filter before the broker's
// refusals became typed errors: the text from the first marker on.
func TestFilterReason(t *testing.T) {
	for _, tc := range []struct {
		text, reason string
		ok           bool
	}{
		{"AMQ229020: Invalid filter: a = = 'b", "AMQ229020: Invalid filter: a = = 'b", true},
		{"Invalid filter", "Invalid filter", true},
		{"org.apache.activemq.artemis.selector.filter.FilterException: bad", "FilterException: bad", true},
		{"Encountered ParseException at line 1", "ParseException at line 1", true},
		{"Cannot move messages onto itself", "", false},
	} {
		reason, ok := filterReason(tc.text)
		if reason != tc.reason || ok != tc.ok {
			t.Errorf("filterReason(%q) = %q, %t; want %q, %t", tc.text, reason, ok, tc.reason, tc.ok)
		}
	}
}

// AMQ229017 "Queue ... does not exist" marks the error for DestroyQueue without making it
// ErrNotFound: from moveMessages it names the target queue, not the MBean's.
func TestResponseError_MarksAMissingQueueForItsCaller(t *testing.T) {
	c := &Client{cfg: Config{Name: "source", Username: "transfer"}}
	const missing = "org.apache.activemq.artemis.api.core.ActiveMQNonExistentQueueException : AMQ229017: Queue nothing.here does not exist"
	err := c.responseError("calling destroyQueue(java.lang.String)", jolokiaResponse{Status: 500, Error: missing})
	if !errors.Is(err, errQueueMissing) || errors.Is(err, ErrNotFound) {
		t.Errorf("want errQueueMissing and not ErrNotFound, got %v", err)
	}
	other := c.responseError("calling destroyQueue(java.lang.String)", jolokiaResponse{Status: 500, Error: "java.lang.Exception : AMQ229999: something else"})
	if errors.Is(other, errQueueMissing) {
		t.Errorf("another failure matches errQueueMissing: %v", other)
	}
}

// go-amqp says a failed SASL exchange only in words; these are its texts (v1.7.0).
func TestSASLRefusal(t *testing.T) {
	for _, tc := range []struct {
		text                 string
		refused, noMechanism bool
	}{
		{"SASL PLAIN auth failed with code 0x1: ", true, false},
		{"no supported auth mechanism ([PLAIN])", false, true},
		{"dial tcp 127.0.0.1:5672: connect: connection refused", false, false},
	} {
		refused, noMechanism := saslRefusal(errors.New(tc.text))
		if refused != tc.refused || noMechanism != tc.noMechanism {
			t.Errorf("saslRefusal(%q) = %t, %t; want %t, %t", tc.text, refused, noMechanism, tc.refused, tc.noMechanism)
		}
	}
}

// A read with ignoreErrors puts an error string in place of an attribute the broker lacks or
// the user may not read.
func TestAttributeRefusal(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  error
	}{
		{"ERROR: javax.management.AttributeNotFoundException : No such attribute: NodeID", ErrNotFound},
		{"ERROR: java.lang.SecurityException : AMQ229213: User: transfer does not have permission='VIEW'", ErrForbidden},
		{"2.40.0", nil},
	} {
		if got := attributeRefusal(tc.value); !errors.Is(got, tc.want) || (tc.want == nil && got != nil) {
			t.Errorf("attributeRefusal(%q) = %v, want %v", tc.value, got, tc.want)
		}
	}
}
