package artemis

import "context"

// PauseQueueForTest calls an operation the transfer user is not granted, to test RBAC refusals.
func (c *Client) PauseQueueForTest(ctx context.Context, queue string) error {
	mbean, err := c.queueMBeanName(ctx, queue)
	if err != nil {
		return err
	}
	_, err = c.exec(ctx, mbean, "pause()")
	return err
}

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
