package artemis

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"
)

// defaultBrowseIdleTimeout is how long a Browser waits for a next message before it concludes
// that it has seen the whole queue.
const defaultBrowseIdleTimeout = 2 * time.Second

// BrowserOptions configure a Browser. The zero value is usable.
type BrowserOptions struct {
	// Credit is the prefetch window. Zero means defaultReceiverCredit; at most 5000.
	Credit int

	// Selector is a Core filter expression, as for ReceiverOptions.Selector.
	Selector string

	// IdleTimeout is how long Next waits for another message before it reports the end of the
	// queue. Zero means defaultBrowseIdleTimeout. Raise it for a distant broker or a paged
	// queue, whose messages the broker reads from disk while browsing.
	IdleTimeout time.Duration
}

// Browser reads the messages of a queue without consuming them: its link has source
// distribution-mode "copy", for which Artemis creates a browse-only consumer.
//
// Artemis sends no end-of-browse signal over AMQP, and go-amqp's drain cannot stand in for one
// (it revokes the credit it drains, and Artemis then never answers), so the end of the queue is
// when no message arrives for IdleTimeout. A browser does not see messages that are being
// delivered to other consumers, nor scheduled messages; messages arriving during the browse may
// or may not be seen.
type Browser struct {
	conn    *Connection
	queue   string
	idle    time.Duration
	amqp    *amqp.Conn
	session *amqp.Session
	link    *amqp.Receiver
}

// NewBrowser attaches a browser to queueFQQN ("address::queue"). The user needs the browse
// permission on the queue.
func (c *Connection) NewBrowser(ctx context.Context, queueFQQN string, opts BrowserOptions) (*Browser, error) {
	what := fmt.Sprintf("opening a browser on %s", queueFQQN)
	credit, err := creditWindow(opts.Credit, defaultReceiverCredit)
	if err != nil {
		return nil, fmt.Errorf("%s on broker %q: %w", what, c.Broker(), err)
	}
	idle := opts.IdleTimeout
	if idle <= 0 {
		idle = defaultBrowseIdleTimeout
	}
	rcvOpts := &amqp.ReceiverOptions{
		Credit:                 credit,
		SettlementMode:         amqp.ReceiverSettleModeFirst.Ptr(),
		SourceDistributionMode: amqp.SourceDistributionModeCopy,
	}
	if opts.Selector != "" {
		rcvOpts.Filters = []amqp.LinkFilter{amqp.NewSelectorFilter(opts.Selector)}
	}
	conn, session, link, err := c.attachReceiver(ctx, what, queueFQQN, opts.Selector, rcvOpts)
	if err != nil {
		return nil, err
	}
	return &Browser{conn: c, queue: queueFQQN, idle: idle, amqp: conn, session: session, link: link}, nil
}

// Next returns the next message of the queue, or ok=false once no message has arrived for the
// idle timeout: the end of the queue, as far as a browser can tell.
func (b *Browser) Next(ctx context.Context) (msg *amqp.Message, ok bool, err error) {
	return b.NextWithin(ctx, b.idle)
}

// NextWithin is Next with a wait of its own: ok=false once no message has arrived for idle.
// A caller that can tell the end of the queue by other means (how many messages the queue
// holds) polls with a short idle and decides itself.
func (b *Browser) NextWithin(ctx context.Context, idle time.Duration) (msg *amqp.Message, ok bool, err error) {
	if err := b.conn.connLost(b.amqp, "browsing "+b.queue); err != nil {
		return nil, false, err
	}
	idleCtx, cancel := context.WithTimeout(ctx, idle)
	defer cancel()
	msg, err = b.link.Receive(idleCtx, nil)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, false, fmt.Errorf("browsing %s on broker %q: %w", b.queue, b.conn.Broker(), ctx.Err())
	case idleCtx.Err() != nil:
		return nil, false, nil
	default:
		return nil, false, b.conn.linkError("browsing "+b.queue, err)
	}
	// Settling a browsed message does nothing on the broker, but it returns credit to the link.
	if err := b.link.AcceptMessage(ctx, msg); err != nil {
		return nil, false, b.conn.linkError("browsing "+b.queue, err)
	}
	return msg, true, nil
}

// Close detaches the browser.
func (b *Browser) Close(ctx context.Context) error {
	return closeLink(ctx, b.conn, "closing the browser on "+b.queue, b.link.Close, b.session)
}
