package artemis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/Azure/go-amqp"
)

// reconnect's backoff: first wait and cap.
const (
	reconnectFirstWait = 250 * time.Millisecond
	reconnectMaxWait   = 5 * time.Second
)

// Connection is an AMQP connection to one broker. Each link (receiver, browser, sender) gets its
// own session, so that one link's flow control or failure does not stall the others.
//
// After a link operation fails with an error for which IsConnectionLost is true, every link of
// the connection is dead: Close it and connect again. Connection is safe for concurrent use.
type Connection struct {
	client *Client

	mu     sync.Mutex
	conn   *amqp.Conn
	url    string // the URL conn was dialed on, without credentials
	nodeID string // the node conn reached (the container-id of its Open)
	closed bool

	// requireNode, when not empty, is the only node Connect and reconnect accept (ConnectTo).
	requireNode string

	// receivers are the receivers open on this connection, which Close detaches first.
	receivers map[*Receiver]struct{}

	reconnectMu sync.Mutex // one reconnect at a time
}

// Connect opens an AMQP connection to the broker, trying its AMQP URLs in order. It
// authenticates with SASL PLAIN when a username is configured and SASL ANONYMOUS otherwise, and
// uses the configured TLS settings for amqps:// URLs. Each attempt is bounded by the configured
// connect timeout and by ctx.
//
// Errors name the broker and the URL and match ErrUnauthorized (credentials refused; the next
// URL is not tried), ErrUntrustedCertificate or ErrUnreachable.
//
// Connect accepts whichever node a URL reaches; ConnectTo insists on one.
func (c *Client) Connect(ctx context.Context) (*Connection, error) {
	return c.ConnectTo(ctx, "")
}

// ConnectTo is Connect that accepts only the broker node nodeID (see Connection.NodeID): a URL
// that reaches another node is closed and the next one is tried. Since a backup that takes over
// runs with its primary's node id, this accepts exactly that node or a backup sharing its
// journal, which alone hold the node's messages and duplicate-id cache. A broker that gives no
// node id (NodeID is empty) cannot be checked and is accepted. When no URL reaches
// nodeID the error is a *WrongNodeError (joined with the errors of the URLs that did not open),
// which matches ErrWrongNode and ErrUnreachable: the node may come back, so callers wait as for
// an unreachable broker. A reconnect keeps the same rule. An empty nodeID accepts any node.
func (c *Client) ConnectTo(ctx context.Context, nodeID string) (*Connection, error) {
	conn, u, got, err := c.dialAMQP(ctx, nodeID)
	if err != nil {
		return nil, err
	}
	return &Connection{client: c, conn: conn, url: u, nodeID: got, requireNode: nodeID}, nil
}

// Broker is the operator's name for the broker, as used in errors.
func (c *Connection) Broker() string { return c.client.cfg.Name }

// URL is the AMQP URL the connection was opened on, with any password redacted.
func (c *Connection) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return redactURL(c.url)
}

// NodeID is the node id of the broker the connection reached, as the broker gave it in its AMQP
// Open (container-id); it equals the NodeID management reports (BrokerInfo), and a backup that
// took over reports its primary's. Empty when the broker did not say: older brokers (2.31.2 among
// them) send their configured name there, which does not identify a node (two
// cluster nodes may share it), so it is not taken for a node id. It changes only when
// reconnect reaches another URL, and then only for a Connection opened with Connect.
func (c *Connection) NodeID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodeID
}

// Close closes the connection and with it every link opened on it. Receivers' unsettled
// messages return to their queues; sends still awaiting their outcome end with OutcomeUnknown.
// Close always returns nil: a connection that failed while closing is closed all the same.
//
// Every Accept written before Close is applied by the broker: Close first detaches the open
// receivers and waits (for receiverDetachTimeout at most) for the broker's answers, which it
// sends only after handling the frames written before. Closing the socket at once lost some:
// go-amqp closes it right after its Close frame, the broker is meanwhile still pushing the
// receivers' prefetched deliveries, and a socket closed with data unread is reset, whereupon
// the broker discards what it had not read yet, the last Accepts included (measured on 2.40:
// 7 of 80 closes after 100 accepts left 38 to 82 of them unapplied; with the detach, 0 of 80).
func (c *Connection) Close() error {
	c.mu.Lock()
	conn := c.conn
	c.closed = true
	receivers := make([]*Receiver, 0, len(c.receivers))
	for r := range c.receivers {
		if r.amqp == conn { // links of a connection that was replaced are gone already
			receivers = append(receivers, r)
		}
	}
	c.mu.Unlock()
	if len(receivers) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), receiverDetachTimeout)
		for _, r := range receivers {
			_ = r.Close(ctx) // on a dropped connection the link has ended already
		}
		cancel()
	}
	if conn != nil {
		_ = conn.Close() // its error only says why the connection had already ended
	}
	return nil
}

// receiverDetachTimeout bounds how long Close waits for the broker to answer its receivers'
// detaches; after it, the connection is closed anyway.
const receiverDetachTimeout = 10 * time.Second

// track records an open receiver, so that Close detaches it first; untrack forgets it.
func (c *Connection) track(r *Receiver) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.receivers == nil {
		c.receivers = map[*Receiver]struct{}{}
	}
	c.receivers[r] = struct{}{}
}

func (c *Connection) untrack(r *Receiver) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.receivers, r)
}

// reconnect replaces a dropped connection: it dials the broker's AMQP URLs again, retrying with
// backoff (from 250ms, doubling, capped at 5s) until a connection opens or ctx ends, so bound
// ctx. It gives up at once when the broker refuses the credentials or its certificate. Links
// opened before are dead; open new ones. A Connection opened with ConnectTo reconnects only to
// its node: URLs that reach another node count as unreachable and are retried.
//
// When the current connection is still up (another goroutine reconnected first), reconnect
// returns nil without dialing, so every user of a shared Connection may call it after a
// connection-lost error.
func (c *Connection) reconnect(ctx context.Context) error {
	c.reconnectMu.Lock()
	defer c.reconnectMu.Unlock()

	c.mu.Lock()
	old, closed := c.conn, c.closed
	c.mu.Unlock()
	if closed {
		return fmt.Errorf("reconnecting to broker %q: the connection was closed", c.Broker())
	}
	if old != nil {
		select {
		case <-old.Done():
			_ = old.Close()
		default:
			return nil
		}
	}

	wait := reconnectFirstWait
	for attempt := 1; ; attempt++ {
		conn, shown, nodeID, err := c.client.dialAMQP(ctx, c.requireNode)
		if err == nil {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.closed {
				_ = conn.Close()
				return fmt.Errorf("reconnecting to broker %q: the connection was closed", c.Broker())
			}
			c.conn, c.url, c.nodeID = conn, shown, nodeID
			return nil
		}
		if errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrUntrustedCertificate) || ctx.Err() != nil {
			return fmt.Errorf("reconnecting to broker %q (attempt %d): %w", c.Broker(), attempt, err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("reconnecting to broker %q: gave up after %d attempts: %w", c.Broker(), attempt, err)
		case <-timer.C:
		}
		wait = min(2*wait, reconnectMaxWait)
	}
}

// newSession opens a session for one link on the current connection, and returns that
// connection too: a link lives and dies with it, even after reconnect replaced it.
func (c *Connection) newSession(ctx context.Context, what string) (*amqp.Conn, *amqp.Session, error) {
	c.mu.Lock()
	conn, closed := c.conn, c.closed
	c.mu.Unlock()
	if closed {
		return nil, nil, fmt.Errorf("%s on broker %q: the connection was closed", what, c.Broker())
	}
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		return nil, nil, c.linkError(what, err)
	}
	return conn, s, nil
}

// connLost returns a connection-lost error once conn has dropped. go-amqp keeps handing out
// prefetched messages after that, but they can no longer be settled and are already back in
// their queue on the broker, so a receiver must not return them.
func (c *Connection) connLost(conn *amqp.Conn, what string) error {
	select {
	case <-conn.Done():
		err := conn.Err()
		if err == nil {
			err = &amqp.ConnError{}
		}
		return c.linkError(what, err)
	default:
		return nil
	}
}

// closeSession ends a session without holding up the caller on a broker that does not answer.
func (c *Connection) closeSession(s *amqp.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), c.client.cfg.connectTimeout())
	defer cancel()
	_ = s.Close(ctx)
}

// closeLink detaches a link and ends its session. Errors of an already dropped connection are
// not reported: the link is gone either way.
func closeLink(ctx context.Context, c *Connection, what string, closeFn func(context.Context) error, s *amqp.Session) error {
	err := closeFn(ctx)
	c.closeSession(s)
	var linkErr *amqp.LinkError
	if err == nil || IsConnectionLost(err) || (errors.As(err, &linkErr) && linkErr.RemoteErr == nil) {
		return nil
	}
	return c.linkError(what, err)
}
