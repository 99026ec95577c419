package move

import (
	"errors"
	"fmt"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// stagedOrigin is what the staging move recorded about a message's source.
type stagedOrigin struct {
	MessageID int64  // the message's broker id on the source queue
	Address   string // the source address
	Queue     string // the source queue
}

// errNotStaged marks a message in a staging queue that no staging move put there.
var errNotStaged = errors.New("message carries no original message id: it was not staged by a broker-side move")

// originOf reads what the staging move recorded, from a Core-origin message's application
// properties or an AMQP-origin message's annotations.
func originOf(msg *amqp.Message) (stagedOrigin, error) {
	var o stagedOrigin
	id, ok := lookup(msg, core.PropOrigMessageID, core.AnnOrigMessageID)
	if !ok {
		return o, errNotStaged
	}
	switch v := id.(type) {
	case int64:
		o.MessageID = v
	case uint64:
		o.MessageID = int64(v)
	case int32:
		o.MessageID = int64(v)
	case string:
		if _, err := fmt.Sscan(v, &o.MessageID); err != nil {
			return o, fmt.Errorf("original message id %q: %w", v, err)
		}
	default:
		return o, fmt.Errorf("original message id has type %T", id)
	}
	if a, ok := lookup(msg, core.PropOrigAddress, core.AnnOrigAddress); ok {
		o.Address = fmt.Sprint(a)
	}
	if q, ok := lookup(msg, core.PropOrigQueue, core.AnnOrigQueue); ok {
		o.Queue = fmt.Sprint(q)
	}
	return o, nil
}

func lookup(msg *amqp.Message, property, annotation string) (any, bool) {
	if v, ok := msg.ApplicationProperties[property]; ok && v != nil {
		return v, true
	}
	if v, ok := msg.Annotations[annotation]; ok && v != nil {
		return v, true
	}
	return nil, false
}
