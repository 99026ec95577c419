package artemis

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"
)

// defaultReceiverCredit is the prefetch window of a Receiver (and of a Browser): how many
// messages the broker may push before the receiver settles any.
const defaultReceiverCredit = 100

// MaxCredit bounds credit windows and in-flight limits: go-amqp's session window is 5000
// transfers, and a larger window only holds more unacknowledged messages in this process.
const MaxCredit = 5000

// selectorFilterName is the source filter Artemis reads a Core filter (JMS selector) from.
const selectorFilterName = "apache.org:selector-filter:string"

// ReceiverOptions configure a Receiver. The zero value is usable.
type ReceiverOptions struct {
	// Credit is the prefetch window: how many messages the broker may push before the receiver
	// settles any. It bounds the messages held unacknowledged in this process. Zero means
	// defaultReceiverCredit; at most 5000.
	Credit int

	// MaxBytes, when above zero, bounds the receiver by bytes as well: credit is granted by
	// hand so that the messages received and not yet settled, plus those the credit still
	// invites (each reckoned at the largest seen so far), stay within MaxBytes, as
	// MessageSize counts them. One message is always invited when none is held, so a
	// message larger than MaxBytes still passes, alone. Credit then stays the upper bound in
	// messages.
	MaxBytes int64

	// Selector is a Core filter expression (JMS selector syntax, e.g. "color = 'red'" or
	// "AMQTimestamp <= 1700000000000"), sent as the apache.org:selector-filter:string source
	// filter. Empty means every message.
	Selector string
}

// Receiver consumes messages from one queue with manual settlement: each message stays on the
// broker, invisible to other consumers, until the receiver settles it with Accept, Release or
// modify, or until the connection drops (then it returns to the queue).
//
// There is deliberately no Reject: Artemis sends a Rejected message to the dead-letter address,
// and drops it when there is none or the DLA has no queue. Use Release or modify to give a
// message back.
//
// Links use receiver-settle-mode first (Artemis forces it): Accept is final when it is written,
// with no confirmation from the broker. If the connection drops just after Accept, the broker
// may not have seen it and delivers the message again, so whatever was done with the message
// must be idempotent (the move engine sends with a duplicate-detection id). Closing the
// receiver or its Connection waits until the broker has applied every Accept written before.
type Receiver struct {
	conn    *Connection
	queue   string
	amqp    *amqp.Conn
	session *amqp.Session
	link    *amqp.Receiver
	bytes   *byteCredit // nil unless ReceiverOptions.MaxBytes is set
}

// NewReceiver attaches a consuming receiver to queueFQQN, a fully qualified queue name
// "address::queue" (a plain name is taken as an anycast address). Unless auto-create is off,
// Artemis creates a missing queue on attach (as an auto-created queue).
func (c *Connection) NewReceiver(ctx context.Context, queueFQQN string, opts ReceiverOptions) (*Receiver, error) {
	what := fmt.Sprintf("opening a receiver on %s", queueFQQN)
	credit, err := creditWindow(opts.Credit, defaultReceiverCredit)
	if err != nil {
		return nil, fmt.Errorf("%s on broker %q: %w", what, c.Broker(), err)
	}
	rcvOpts := &amqp.ReceiverOptions{
		Credit:         credit,
		SettlementMode: amqp.ReceiverSettleModeFirst.Ptr(),
	}
	if opts.MaxBytes > 0 {
		rcvOpts.Credit = -1 // granted by hand (byteCredit)
	}
	if opts.Selector != "" {
		rcvOpts.Filters = []amqp.LinkFilter{amqp.NewSelectorFilter(opts.Selector)}
	}
	conn, session, link, err := c.attachReceiver(ctx, what, queueFQQN, opts.Selector, rcvOpts)
	if err != nil {
		return nil, err
	}
	r := &Receiver{conn: c, queue: queueFQQN, amqp: conn, session: session, link: link}
	if opts.MaxBytes > 0 {
		r.bytes = newByteCredit(link, int(credit), opts.MaxBytes)
	}
	c.track(r)
	return r, nil
}

func creditWindow(credit, def int) (int32, error) {
	switch {
	case credit < 0 || credit > MaxCredit:
		return 0, fmt.Errorf("credit %d is outside 1..%d", credit, MaxCredit)
	case credit == 0:
		return int32(def), nil
	default:
		return int32(credit), nil
	}
}

// attachReceiver opens a session and a receiving link on it, checking that Artemis kept the
// selector (it would otherwise deliver unfiltered messages).
func (c *Connection) attachReceiver(ctx context.Context, what, source, selector string, opts *amqp.ReceiverOptions) (*amqp.Conn, *amqp.Session, *amqp.Receiver, error) {
	conn, session, err := c.newSession(ctx, what)
	if err != nil {
		return nil, nil, nil, err
	}
	link, err := session.NewReceiver(ctx, source, opts)
	if err != nil {
		c.closeSession(session)
		return nil, nil, nil, c.linkError(what, err)
	}
	if selector != "" && link.LinkSourceFilterValue(selectorFilterName) == nil {
		_ = link.Close(ctx)
		c.closeSession(session)
		return nil, nil, nil, fmt.Errorf("%s on broker %q: the broker did not accept the selector %q", what, c.Broker(), selector)
	}
	return conn, session, link, nil
}

// Receive waits for the next message. The caller must settle it with Accept, Release or modify;
// unsettled messages count against the credit window.
func (r *Receiver) Receive(ctx context.Context) (*amqp.Message, error) {
	what := "receiving from " + r.queue
	if err := r.conn.connLost(r.amqp, what); err != nil {
		return nil, err
	}
	msg, err := r.link.Receive(ctx, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s on broker %q: %w", what, r.conn.Broker(), ctx.Err())
		}
		return nil, r.conn.linkError(what, err)
	}
	if err := r.conn.connLost(r.amqp, what); err != nil {
		return nil, err
	}
	if r.bytes != nil {
		r.bytes.received(msg)
	}
	return msg, nil
}

// StillAttached checks, with a round trip to the broker, that the receiver's connection is open
// and its link attached, without waiting for a message: a session is begun and ended on the
// receiver's connection, which a broker that dropped the connection fails. It suits a receiver
// whose selector matches nothing (a lease); another would have a message taken off its credit.
func (r *Receiver) StillAttached(ctx context.Context) error {
	what := "checking the receiver on " + r.queue
	if err := r.conn.connLost(r.amqp, what); err != nil {
		return err
	}
	s, err := r.amqp.NewSession(ctx, nil)
	if err != nil {
		return r.conn.linkError(what, err)
	}
	r.conn.closeSession(s)
	// A link the broker detached (its queue deleted) has ended by now: Receive reports it at
	// once, and otherwise waits out the short context.
	peek, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if msg, err := r.link.Receive(peek, nil); err != nil && peek.Err() == nil {
		return r.conn.linkError(what, err)
	} else if msg != nil {
		_ = r.link.ReleaseMessage(ctx, msg)
	}
	return r.conn.connLost(r.amqp, what)
}

// TryReceive returns a message the broker already pushed into the credit window, or nil when
// there is none, without waiting. It lets a caller fill a batch from what has arrived.
func (r *Receiver) TryReceive() (*amqp.Message, error) {
	what := "receiving from " + r.queue
	if err := r.conn.connLost(r.amqp, what); err != nil {
		return nil, err
	}
	msg := r.link.Prefetched()
	if msg != nil && r.bytes != nil {
		r.bytes.received(msg)
	}
	return msg, nil
}

// settled tells the byte window that msg no longer counts against it. A failed settlement
// counts too: the link is then gone, and the message back in its queue.
func (r *Receiver) settled(msg *amqp.Message) {
	if r.bytes != nil {
		r.bytes.settled(msg)
	}
}

// Accept acknowledges msg: the broker removes it from the queue. See Receiver for why the
// broker's processing of an Accept is not confirmed.
func (r *Receiver) Accept(ctx context.Context, msg *amqp.Message) error {
	defer r.settled(msg)
	if err := r.link.AcceptMessage(ctx, msg); err != nil {
		return r.conn.linkError("accepting a message from "+r.queue, err)
	}
	return nil
}

// Release gives msg back to the queue unchanged: it does not count as a delivery attempt, and
// the broker may deliver it again to this or another consumer.
func (r *Receiver) Release(ctx context.Context, msg *amqp.Message) error {
	defer r.settled(msg)
	if err := r.link.ReleaseMessage(ctx, msg); err != nil {
		return r.conn.linkError("releasing a message to "+r.queue, err)
	}
	return nil
}

// modifyOptions say how a message given back with modify is to be treated.
type modifyOptions struct {
	// DeliveryFailed counts the delivery as a failed attempt: Artemis increments the delivery
	// count, and a message reaching the queue's max-delivery-attempts (default 10) goes to the
	// dead-letter address, so a staging queue should set max-delivery-attempts to -1.
	DeliveryFailed bool
	// UndeliverableHere asks the broker not to deliver the message to this receiver again; it
	// stays in the queue for other consumers.
	UndeliverableHere bool
}

// modify gives msg back to the queue with the given hints.
func (r *Receiver) modify(ctx context.Context, msg *amqp.Message, opts modifyOptions) error {
	defer r.settled(msg)
	err := r.link.ModifyMessage(ctx, msg, &amqp.ModifyMessageOptions{
		DeliveryFailed:    opts.DeliveryFailed,
		UndeliverableHere: opts.UndeliverableHere,
	})
	if err != nil {
		return r.conn.linkError("modifying a message of "+r.queue, err)
	}
	return nil
}

// Close detaches the receiver and waits for the broker's answer, so every Accept written before
// is applied. Messages it has not settled return to the queue.
func (r *Receiver) Close(ctx context.Context) error {
	r.conn.untrack(r)
	return closeLink(ctx, r.conn, "closing the receiver on "+r.queue, r.link.Close, r.session)
}
