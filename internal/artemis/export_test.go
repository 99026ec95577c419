package artemis

import (
	"context"
	"net/url"

	"github.com/Azure/go-amqp"
)

// PauseQueueForTest calls an operation the transfer user is not granted, to test RBAC refusals.
func (c *Client) PauseQueueForTest(ctx context.Context, queue string) error {
	mbean, err := c.queueMBeanName(ctx, queue)
	if err != nil {
		return err
	}
	_, err = c.exec(ctx, mbean, "pause()")
	return err
}

// HasSessionCookie reports whether the client holds a cookie of its management URL.
func HasSessionCookie(c *Client) bool {
	u, err := url.Parse(c.cfg.ManagementURL)
	return err == nil && len(c.http.Jar.Cookies(u)) > 0
}

// Validate is validate.
func (c Config) Validate() error { return c.validate() }

// Reconnect is reconnect.
func (c *Connection) Reconnect(ctx context.Context) error { return c.reconnect(ctx) }

// ModifyOptions is modifyOptions.
type ModifyOptions = modifyOptions

// Modify is modify.
func (r *Receiver) Modify(ctx context.Context, msg *amqp.Message, opts ModifyOptions) error {
	return r.modify(ctx, msg, opts)
}

// InFlight is inFlight.
func (s *Sender) InFlight() int { return s.inFlight() }

// What the external tests name of the package's own errors, conditions and checks.
var (
	ErrConnectionLost = errConnectionLost
	ErrInvalidFilter  = errInvalidFilter
	ErrOriginRejected = errOriginRejected
	RedactURL         = redactURL
)

const (
	ConditionResourceLimitExceeded = conditionResourceLimitExceeded
	FieldCAPEM                     = fieldCAPEM
	FieldClientCertPEM             = fieldClientCertPEM
)
