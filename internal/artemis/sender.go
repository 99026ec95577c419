package artemis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"
)

// defaultMaxInFlight is how many sent messages a Sender lets await their outcome at once.
const defaultMaxInFlight = 100

// SenderOptions configure a Sender. The zero value is usable.
type SenderOptions struct {
	// MaxInFlight bounds how many sent messages may await their outcome at once; Send blocks
	// beyond it. Zero means defaultMaxInFlight; at most 5000.
	MaxInFlight int

	// AllowNonDurable sends a message without a Header as it is. Artemis stores such a message
	// as non-durable: it is lost when the broker restarts. By default the Sender gives such a
	// message a Header with Durable set (on a copy; the caller's message is not changed). A
	// message that has a Header is always sent as given.
	AllowNonDurable bool

	// Name is the link's name; empty: one go-amqp draws. Artemis lists an AMQP sender in its
	// producers (listProducersInfoAsJSON) under its link name, so other processes can tell what
	// sends to an address.
	Name string
}

// Sender sends messages to one queue and reports each message's outcome separately, so that
// the source copy is acknowledged only after the target accepted it. Sends are pipelined:
// up to MaxInFlight messages await their outcome at once.
type Sender struct {
	conn       *Connection
	target     string
	nonDurable bool
	session    *amqp.Session
	link       *amqp.Sender
	slots      chan struct{} // one token per send awaiting its outcome
}

// NewSender attaches a sender to targetFQQN, a fully qualified queue name "address::queue", so
// that only that queue receives the messages. Messages are sent unsettled and the broker
// settles each with its outcome (receiver-settle-mode first). The link sets no capabilities,
// which would make Artemis pick a routing type that may not match the queue.
//
// With auto-create on, Artemis creates a missing address and queue on attach (auto-created,
// hence subject to auto-delete); check the target with management first.
func (c *Connection) NewSender(ctx context.Context, targetFQQN string, opts SenderOptions) (*Sender, error) {
	what := fmt.Sprintf("opening a sender to %s", targetFQQN)
	inFlight := opts.MaxInFlight
	switch {
	case inFlight < 0 || inFlight > MaxCredit:
		return nil, fmt.Errorf("%s on broker %q: max in-flight %d is outside 1..%d", what, c.Broker(), inFlight, MaxCredit)
	case inFlight == 0:
		inFlight = defaultMaxInFlight
	}
	_, session, err := c.newSession(ctx, what)
	if err != nil {
		return nil, err
	}
	link, err := session.NewSender(ctx, targetFQQN, &amqp.SenderOptions{
		Name:                        opts.Name,
		SettlementMode:              amqp.SenderSettleModeUnsettled.Ptr(),
		RequestedReceiverSettleMode: amqp.ReceiverSettleModeFirst.Ptr(),
	})
	if err != nil {
		c.closeSession(session)
		return nil, c.linkError(what, err)
	}
	return &Sender{
		conn:       c,
		target:     targetFQQN,
		nonDurable: opts.AllowNonDurable,
		session:    session,
		link:       link,
		slots:      make(chan struct{}, inFlight),
	}, nil
}

// PendingSend is a message on its way to the target broker. Its outcome arrives later; the
// in-flight slot it holds is freed when it does, whether or not anyone waits for it.
type PendingSend struct {
	done    chan struct{}
	outcome Outcome
	err     error
}

// Done is closed once the outcome is known.
func (p *PendingSend) Done() <-chan struct{} { return p.done }

// Wait waits for the outcome. It returns nil when the broker accepted the message, an
// *OutcomeError when it rejected, released or modified it, and an error matching
// errConnectionLost (or a closed-sender error) when no outcome arrived. Only the ctx error
// leaves the outcome pending: Wait may be called again.
func (p *PendingSend) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Outcome is the outcome once Done is closed, OutcomeUnknown before.
func (p *PendingSend) Outcome() Outcome {
	select {
	case <-p.done:
		return p.outcome
	default:
		return OutcomeUnknown
	}
}

// Send transmits msg and returns without waiting for its outcome. It blocks while MaxInFlight
// sends await their outcome, and while the broker grants no credit (an address with
// address-full-policy BLOCK withholds credit when full); ctx bounds that wait.
//
// An error from Send means the outcome is unknown: the message may or may not have reached the
// broker. Send it again (with the same duplicate-detection id) after reconnecting if needed.
func (s *Sender) Send(ctx context.Context, msg *amqp.Message) (*PendingSend, error) {
	what := "sending to " + s.target
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s on broker %q: %d messages still await their outcome: %w", what, s.conn.Broker(), cap(s.slots), ctx.Err())
	}
	if msg.Header == nil && !s.nonDurable {
		durable := *msg
		durable.Header = &amqp.MessageHeader{Durable: true}
		msg = &durable
	}
	receipt, err := s.link.SendWithReceipt(ctx, msg, nil)
	if err != nil {
		<-s.slots
		if ctx.Err() != nil {
			// go-amqp reports a ctx that ended while waiting for credit as "credit limit exceeded".
			return nil, fmt.Errorf("%s on broker %q: the message was not sent in time (the broker may be withholding credit from a full address): %w",
				what, s.conn.Broker(), ctx.Err())
		}
		return nil, s.conn.linkError(what, err)
	}
	p := &PendingSend{done: make(chan struct{})}
	go s.awaitOutcome(p, receipt)
	return p, nil
}

// awaitOutcome records the outcome of one send. go-amqp's Wait returns at the latest when the
// link ends (closed sender, dropped connection), so this goroutine cannot outlive the link.
func (s *Sender) awaitOutcome(p *PendingSend, receipt amqp.SendReceipt) {
	defer func() { <-s.slots }()
	defer close(p.done)
	state, err := receipt.Wait(context.Background())
	if err != nil {
		p.outcome = OutcomeUnknown
		p.err = s.conn.linkError("awaiting the outcome of a message sent to "+s.target, err)
		return
	}
	oe := &OutcomeError{Broker: s.conn.Broker(), Target: s.target}
	switch st := state.(type) {
	case *amqp.StateAccepted:
		p.outcome = OutcomeAccepted
		return
	case *amqp.StateRejected:
		oe.Outcome = OutcomeRejected
		if st.Error != nil {
			oe.Condition = string(st.Error.Condition)
			oe.Description = st.Error.Description
		}
	case *amqp.StateReleased:
		oe.Outcome = OutcomeReleased
	case *amqp.StateModified:
		oe.Outcome = OutcomeModified
		oe.DeliveryFailed = st.DeliveryFailed
		oe.UndeliverableHere = st.UndeliverableHere
	default:
		oe.Outcome = OutcomeUnknown
	}
	p.outcome = oe.Outcome
	p.err = oe
}

// inFlight is how many sent messages await their outcome.
func (s *Sender) inFlight() int { return len(s.slots) }

// Close detaches the sender. Sends still awaiting their outcome end with OutcomeUnknown; wait
// for their outcomes first to avoid resending messages the broker accepted.
func (s *Sender) Close(ctx context.Context) error {
	return closeLink(ctx, s.conn, "closing the sender to "+s.target, s.link.Close, s.session)
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
	// conditionResourceLimitExceeded: the target address is full (address-full-policy FAIL, or
	// BLOCK past its reject threshold). Waiting for consumers to make room and retrying helps.
	conditionResourceLimitExceeded = string(amqp.ErrCondResourceLimitExceeded)
	// conditionUnauthorizedAccess: the user may not send to this address. Retrying does not help.
	conditionUnauthorizedAccess = string(amqp.ErrCondUnauthorizedAccess)
)

// CreditWait bounds how long SendStored waits while the broker grants no credit. A broker
// withholds credit from every producer while its disk use is above max-disk-usage, and from an
// address with address-full-policy BLOCK while that address is full; both last until an
// operator or a consumer makes room, so a caller says what it waits for and gives up in time.
type CreditWait struct {
	// Limit is how long the send and its outcome may take in all; zero: until ctx ends.
	Limit time.Duration
	// Notice is how long a send may wait before Waiting is called; zero: Limit/10.
	Notice time.Duration
	// Waiting, when not nil, is called once when the send or its outcome has taken Notice,
	// and Waited once it is over (however it ended).
	Waiting func(waited time.Duration)
	Waited  func()
}

// errCreditLimit is the cause of SendStored's own deadline: the caller's ending is not a
// withheld credit.
var errCreditLimit = errors.New("the credit wait's limit passed")

// CreditWithheldError: the broker granted no credit to send to Target within Waited, so the
// message was not sent.
type CreditWithheldError struct {
	Broker, Target string
	Waited         time.Duration
}

func (e *CreditWithheldError) Error() string {
	return fmt.Sprintf("broker %q granted no credit to send to %s for %s, so nothing was sent: a broker blocks producers while its disk use "+
		"is above max-disk-usage, and those of an address with address-full-policy BLOCK while the address is full; "+
		"free room on the broker (its log names the cause: AMQ222210 for the disk, AMQ222183 for a full address), then try again",
		e.Broker, e.Target, e.Waited.Round(time.Second))
}

// SendStored sends msg and waits for the broker to store it, within w.Limit: it returns nil when
// the broker accepted it, a *CreditWithheldError when no credit came in time (nothing was sent),
// and otherwise what Send and PendingSend.Wait return (a deadline during the outcome's wait
// leaves unknown whether the broker stored the message).
func (s *Sender) SendStored(ctx context.Context, msg *amqp.Message, w CreditWait) error {
	start := time.Now()
	if w.Limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, w.Limit, errCreditLimit)
		defer cancel()
	}
	if w.Waiting != nil {
		notice := cmp.Or(w.Notice, w.Limit/10)
		if notice <= 0 {
			notice = 5 * time.Second
		}
		report := time.AfterFunc(notice, func() { w.Waiting(time.Since(start)) })
		defer func() {
			if !report.Stop() && w.Waited != nil {
				w.Waited()
			}
		}()
	}
	p, err := s.Send(ctx, msg)
	if err != nil {
		if errors.Is(context.Cause(ctx), errCreditLimit) {
			return &CreditWithheldError{Broker: s.conn.Broker(), Target: s.target, Waited: time.Since(start)}
		}
		return err
	}
	if err := p.Wait(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("sending to %s on broker %q: the broker took no decision on the message within %s (it may or may not be stored): %w",
				s.target, s.conn.Broker(), time.Since(start).Round(time.Second), err)
		}
		return err
	}
	return nil
}
