package artemis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/go-amqp"
)

// Defaults for the zero values of the messaging options.
const (
	// DefaultReceiverCredit is the prefetch window of a Receiver: how many messages the broker
	// may push before the receiver settles any.
	DefaultReceiverCredit = 100
	// DefaultBrowseIdleTimeout is how long a Browser waits for a next message before it
	// concludes that it has seen the whole queue.
	DefaultBrowseIdleTimeout = 2 * time.Second
	// DefaultMaxInFlight is how many sent messages a Sender lets await their outcome at once.
	DefaultMaxInFlight = 100
)

// MaxCredit bounds credit windows and in-flight limits: go-amqp's session window is 5000
// transfers, and a larger window only holds more unacknowledged messages in this process.
const MaxCredit = 5000

// Reconnect backoff: first wait and cap.
const (
	reconnectFirstWait = 250 * time.Millisecond
	reconnectMaxWait   = 5 * time.Second
)

// selectorFilterName is the source filter Artemis reads a Core filter (JMS selector) from.
const selectorFilterName = "apache.org:selector-filter:string"

// Connection is an AMQP connection to one broker. Each link (receiver, browser, sender) gets its
// own session, so that one link's flow control or failure does not stall the others.
//
// After a link operation fails with an error for which IsConnectionLost is true, every link of
// the connection is dead: call Reconnect, then open new links. Connection is safe for
// concurrent use.
type Connection struct {
	client *Client

	mu     sync.Mutex
	conn   *amqp.Conn
	url    string // the URL conn was dialed on, without credentials
	nodeID string // the node conn reached (the container-id of its Open)
	closed bool

	// requireNode, when not empty, is the only node Connect and Reconnect accept (ConnectTo).
	requireNode string

	reconnectMu sync.Mutex // one Reconnect at a time
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
// an unreachable broker. Reconnect keeps the same rule. An empty nodeID accepts any node.
func (c *Client) ConnectTo(ctx context.Context, nodeID string) (*Connection, error) {
	conn, u, got, err := c.dialAMQP(ctx, nodeID)
	if err != nil {
		return nil, err
	}
	return &Connection{client: c, conn: conn, url: u, nodeID: got, requireNode: nodeID}, nil
}

// dialAMQP tries every AMQP URL in order and returns the first connection that opens on node
// want (any node when want is empty), with its URL and node id.
func (c *Client) dialAMQP(ctx context.Context, want string) (*amqp.Conn, string, string, error) {
	if len(c.cfg.AMQPURLs) == 0 {
		return nil, "", "", fmt.Errorf("connecting to broker %q: no amqp_urls configured: %w", c.cfg.Name, ErrUnreachable)
	}
	var errs []error
	var wrong *WrongNodeError
	for _, raw := range c.cfg.AMQPURLs {
		conn, shown, got, err := c.dialOne(ctx, raw)
		// A broker that gives no node id (older Artemis, 2.31.2 among them, sends its name
		// instead) cannot be checked; it is accepted, as before, and the plan warns about it.
		if err == nil && (want == "" || got == want || got == "") {
			return conn, shown, got, nil
		}
		if err == nil {
			_ = conn.Close() // another node: it has neither the run's queues nor its duplicate ids
			if wrong == nil {
				wrong = &WrongNodeError{Broker: c.cfg.Name, Want: want}
				errs = append(errs, wrong)
			}
			wrong.Found = append(wrong.Found, NodeAt{URL: RedactURL(shown), NodeID: got})
			continue
		}
		errs = append(errs, err)
		// Other URLs of the same broker would refuse the same credentials, and a cancelled
		// ctx ends every attempt.
		if errors.Is(err, ErrUnauthorized) || ctx.Err() != nil {
			break
		}
	}
	return nil, "", "", errors.Join(errs...)
}

// dialOne opens one connection and turns go-amqp's errors into ones that say what to do. It
// returns the node id the connection reached ("" when the broker did not say).
func (c *Client) dialOne(ctx context.Context, raw string) (*amqp.Conn, string, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, raw, "", fmt.Errorf("connecting to broker %q: %q is not a URL: %w", c.cfg.Name, raw, err)
	}
	user := c.cfg.Username
	opts := &amqp.ConnOptions{TLSConfig: c.cfg.TLS}
	switch {
	case c.cfg.Username != "":
		// Configured credentials win over any in the URL (go-amqp would prefer the URL's).
		u.User = nil
		opts.SASLType = amqp.SASLTypePlain(c.cfg.Username, c.cfg.Password)
	case u.User != nil:
		// The URL's credentials, with SASL PLAIN: go-amqp only reads them from a URL it dials
		// itself, and openAMQP hands it a socket.
		user = u.User.Username()
		password, _ := u.User.Password()
		opts.SASLType = amqp.SASLTypePlain(user, password)
	default:
		opts.SASLType = amqp.SASLTypeAnonymous()
	}
	shown := u.Redacted()

	dialCtx, cancel := context.WithTimeout(ctx, c.cfg.connectTimeout())
	defer cancel()
	conn, nodeID, err := c.openAMQP(dialCtx, u, opts)
	if err != nil {
		return nil, shown, "", c.dialError(ctx, shown, user, err)
	}
	// Artemis completes SASL ANONYMOUS even when it requires a login, then opens the
	// connection flagged as failed and closes it with amqp:unauthorized-access.
	if failed, _ := conn.Properties()["amqp:connection-establishment-failed"].(bool); failed {
		var reason error
		select {
		case <-conn.Done():
			reason = conn.Err()
		case <-dialCtx.Done():
			reason = errors.New("the broker flagged the connection as failed")
		}
		_ = conn.Close()
		var amqpErr *amqp.Error
		if errors.As(reason, &amqpErr) && amqpErr.Condition == amqp.ErrCondUnauthorizedAccess {
			if user == "" {
				return nil, shown, "", fmt.Errorf("connecting to broker %q at %s: the broker refused an anonymous login: set username and password: %w (%s)",
					c.cfg.Name, shown, ErrUnauthorized, amqpErr.Description)
			}
			return nil, shown, "", fmt.Errorf("connecting to broker %q at %s: the broker refused the credentials of user %q: check username and password: %w (%s)",
				c.cfg.Name, shown, user, ErrUnauthorized, amqpErr.Description)
		}
		return nil, shown, "", fmt.Errorf("connecting to broker %q at %s: the broker refused the connection: %w: %w", c.cfg.Name, shown, ErrUnreachable, reason)
	}
	return conn, shown, nodeID, nil
}

// openAMQP dials the URL's host (TCP, then TLS for amqps:// and amqp+ssl://) and opens an
// AMQP connection over it. The socket is ours rather than go-amqp's so that the frames go-amqp
// writes one at a time leave in as few writes as possible (coalescingConn), and so that the
// broker's node id can be read from its Open (peerOpenConn), which go-amqp does not expose.
func (c *Client) openAMQP(ctx context.Context, u *url.URL, opts *amqp.ConnOptions) (*amqp.Conn, string, error) {
	secure := false
	port := "5672"
	switch u.Scheme {
	case "amqp", "":
	case "amqps", "amqp+ssl":
		secure, port = true, "5671"
	default:
		return nil, "", fmt.Errorf("unsupported scheme %q: use amqp:// or amqps://", u.Scheme)
	}
	host := u.Hostname()
	if p := u.Port(); p != "" {
		port = p
	}
	var dialer net.Dialer
	nc, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, "", err
	}
	if secure {
		cfg := &tls.Config{}
		if opts.TLSConfig != nil {
			cfg = opts.TLSConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, "", err
		}
		nc = tc
	}
	open := *opts
	open.TLSConfig = nil // TLS is done; go-amqp must not negotiate it again
	if open.HostName == "" {
		open.HostName = host
	}
	// go-amqp returns from NewConn once it has read the broker's Open, so peer has parsed it.
	peer := newPeerOpenConn(nc)
	conn, err := amqp.NewConn(ctx, newCoalescingConn(peer), &open)
	if err != nil {
		return nil, "", err // go-amqp closed the socket
	}
	return conn, nodeIDOf(peer.peerContainerID()), nil
}

// dialError classifies a failed dial. ctx is the caller's context (not the one bounded by the
// connect timeout), to tell a cancellation from a timeout.
func (c *Client) dialError(ctx context.Context, shown, user string, err error) error {
	// Callers pass a redacted URL; redacting again keeps a password out of the error whatever they pass.
	prefix := fmt.Sprintf("connecting to broker %q at %s", c.cfg.Name, RedactURL(shown))
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", prefix, ctx.Err())
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "SASL") && strings.Contains(msg, "auth failed"):
		// go-amqp reports a SASL outcome other than ok as a plain error, hence the text match.
		if user == "" {
			return fmt.Errorf("%s: the broker refused an anonymous login: set username and password: %w (%v)", prefix, ErrUnauthorized, err)
		}
		return fmt.Errorf("%s: the broker refused the credentials of user %q: check username and password: %w (%v)", prefix, user, ErrUnauthorized, err)
	case strings.Contains(msg, "no supported auth mechanism"):
		if user == "" {
			return fmt.Errorf("%s: the broker does not allow anonymous login: set username and password: %w (%v)", prefix, ErrUnauthorized, err)
		}
		return fmt.Errorf("%s: the broker offers no SASL mechanism this client supports (PLAIN, ANONYMOUS): %w (%v)", prefix, ErrUnauthorized, err)
	case isUntrustedCertificate(err):
		var hostErr x509.HostnameError
		if errors.As(err, &hostErr) {
			return fmt.Errorf("%s: the broker's TLS certificate is not valid for this host name: use a host name the certificate names or set tls.server_name: %w: %w",
				prefix, ErrUntrustedCertificate, err)
		}
		return fmt.Errorf("%s: the broker's TLS certificate was not trusted: set tls.ca_cert_pem or tls.ca_cert_file to the CA that signed it: %w: %w",
			prefix, ErrUntrustedCertificate, err)
	case isTimeout(err):
		return fmt.Errorf("%s: no AMQP connection within %s (is the port an AMQP acceptor, and reachable?): %w: %w",
			prefix, c.cfg.connectTimeout(), ErrUnreachable, err)
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Errorf("%s: the port does not speak TLS: use amqp:// for it: %w: %w", prefix, ErrUnreachable, err)
	default:
		return fmt.Errorf("%s: %w: %w", prefix, ErrUnreachable, err)
	}
}

// isTimeout reports a dial that ran out of time: go-amqp returns either the context's error or,
// when the socket deadline it derives from the context fires first, an i/o timeout.
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
}

func isUntrustedCertificate(err error) bool {
	var verifyErr *tls.CertificateVerificationError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	return errors.As(err, &verifyErr) || errors.As(err, &authErr) || errors.As(err, &hostErr) || errors.As(err, &invalidErr)
}

// Broker is the operator's name for the broker, as used in errors.
func (c *Connection) Broker() string { return c.client.cfg.Name }

// URL is the AMQP URL the connection was opened on, with any password redacted.
func (c *Connection) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return RedactURL(c.url)
}

// NodeID is the node id of the broker the connection reached, as the broker gave it in its AMQP
// Open (container-id); it equals the NodeID management reports (BrokerInfo), and a backup that
// took over reports its primary's. Empty when the broker did not say: older brokers (2.31.2 among
// them) send their configured name there, which does not identify a node (two
// cluster nodes may share it), so it is not taken for a node id. It changes only when
// Reconnect reaches another URL, and then only for a Connection opened with Connect.
func (c *Connection) NodeID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodeID
}

// Close closes the connection and with it every link opened on it. Receivers' unsettled
// messages return to their queues; sends still awaiting their outcome end with OutcomeUnknown.
// Close always returns nil: a connection that failed while closing is closed all the same.
func (c *Connection) Close() error {
	c.mu.Lock()
	conn := c.conn
	c.closed = true
	c.mu.Unlock()
	if conn != nil {
		_ = conn.Close() // its error only says why the connection had already ended
	}
	return nil
}

// Reconnect replaces a dropped connection: it dials the broker's AMQP URLs again, retrying with
// backoff (from 250ms, doubling, capped at 5s) until a connection opens or ctx ends, so bound
// ctx. It gives up at once when the broker refuses the credentials or its certificate. Links
// opened before are dead; open new ones. A Connection opened with ConnectTo reconnects only to
// its node: URLs that reach another node count as unreachable and are retried.
//
// When the current connection is still up (another goroutine reconnected first), Reconnect
// returns nil without dialing, so every user of a shared Connection may call it after a
// connection-lost error.
func (c *Connection) Reconnect(ctx context.Context) error {
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
// connection too: a link lives and dies with it, even after Reconnect replaced it.
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

// linkError wraps an error of a link operation with what was being done, and marks errors
// from a dropped connection with ErrConnectionLost and refusals with ErrForbidden/ErrNotFound.
func (c *Connection) linkError(what string, err error) error {
	if IsConnectionLost(err) {
		return fmt.Errorf("%s on broker %q: %w: %w", what, c.Broker(), ErrConnectionLost, err)
	}
	var amqpErr *amqp.Error
	if errors.As(err, &amqpErr) {
		remote := &remoteError{amqpErr}
		user := c.client.cfg.Username
		switch {
		case amqpErr.Condition == amqp.ErrCondUnauthorizedAccess || strings.Contains(amqpErr.Description, "AMQ229032"):
			// AMQ229032 "does not have permission" also arrives as amqp:internal-error when
			// an attach would have to auto-create the address.
			return fmt.Errorf("%s on broker %q: user %q lacks a permission (grant it in the broker's security-settings): %w: %w",
				what, c.Broker(), user, ErrForbidden, remote)
		case amqpErr.Condition == amqp.ErrCondNotFound:
			return fmt.Errorf("%s on broker %q: %w: %w", what, c.Broker(), ErrNotFound, remote)
		default:
			return fmt.Errorf("%s on broker %q: %w", what, c.Broker(), remote)
		}
	}
	return fmt.Errorf("%s on broker %q: %w", what, c.Broker(), err)
}

// ReceiverOptions configure a Receiver. The zero value is usable.
type ReceiverOptions struct {
	// Credit is the prefetch window: how many messages the broker may push before the receiver
	// settles any. It bounds the messages held unacknowledged in this process. Zero means
	// DefaultReceiverCredit; at most 5000.
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
// Modify, or until the connection drops (then it returns to the queue).
//
// There is deliberately no Reject: Artemis sends a Rejected message to the dead-letter address,
// and drops it when there is none or the DLA has no queue. Use Release or Modify to give a
// message back.
//
// Links use receiver-settle-mode first (Artemis forces it): Accept is final when it is written,
// with no confirmation from the broker. If the connection drops just after Accept, the broker
// may not have seen it and delivers the message again, so whatever was done with the message
// must be idempotent (the move engine sends with a duplicate-detection id).
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
	credit, err := creditWindow(opts.Credit, DefaultReceiverCredit)
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

// Queue is the queue (address::queue) the receiver consumes from.
func (r *Receiver) Queue() string { return r.queue }

// Receive waits for the next message. The caller must settle it with Accept, Release or Modify;
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

// ModifyOptions say how a message given back with Modify is to be treated.
type ModifyOptions struct {
	// DeliveryFailed counts the delivery as a failed attempt: Artemis increments the delivery
	// count, and a message reaching the queue's max-delivery-attempts (default 10) goes to the
	// dead-letter address, so a staging queue should set max-delivery-attempts to -1.
	DeliveryFailed bool
	// UndeliverableHere asks the broker not to deliver the message to this receiver again; it
	// stays in the queue for other consumers.
	UndeliverableHere bool
}

// Modify gives msg back to the queue with the given hints.
func (r *Receiver) Modify(ctx context.Context, msg *amqp.Message, opts ModifyOptions) error {
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

// Close detaches the receiver. Messages it has not settled return to the queue.
func (r *Receiver) Close(ctx context.Context) error {
	return closeLink(ctx, r.conn, "closing the receiver on "+r.queue, r.link.Close, r.session)
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

// BrowserOptions configure a Browser. The zero value is usable.
type BrowserOptions struct {
	// Credit is the prefetch window. Zero means DefaultReceiverCredit; at most 5000.
	Credit int

	// Selector is a Core filter expression, as for ReceiverOptions.Selector.
	Selector string

	// IdleTimeout is how long Next waits for another message before it reports the end of the
	// queue. Zero means DefaultBrowseIdleTimeout. Raise it for a distant broker or a paged
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
	credit, err := creditWindow(opts.Credit, DefaultReceiverCredit)
	if err != nil {
		return nil, fmt.Errorf("%s on broker %q: %w", what, c.Broker(), err)
	}
	idle := opts.IdleTimeout
	if idle <= 0 {
		idle = DefaultBrowseIdleTimeout
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
	if err := b.conn.connLost(b.amqp, "browsing "+b.queue); err != nil {
		return nil, false, err
	}
	idleCtx, cancel := context.WithTimeout(ctx, b.idle)
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

// SenderOptions configure a Sender. The zero value is usable.
type SenderOptions struct {
	// MaxInFlight bounds how many sent messages may await their outcome at once; Send blocks
	// beyond it. Zero means DefaultMaxInFlight; at most 5000.
	MaxInFlight int

	// AllowNonDurable sends a message without a Header as it is. Artemis stores such a message
	// as non-durable: it is lost when the broker restarts. By default the Sender gives such a
	// message a Header with Durable set (on a copy; the caller's message is not changed). A
	// message that has a Header is always sent as given.
	AllowNonDurable bool
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
		inFlight = DefaultMaxInFlight
	}
	_, session, err := c.newSession(ctx, what)
	if err != nil {
		return nil, err
	}
	link, err := session.NewSender(ctx, targetFQQN, &amqp.SenderOptions{
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

// Target is the address (address::queue) the sender sends to.
func (s *Sender) Target() string { return s.target }

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
// ErrConnectionLost (or a closed-sender error) when no outcome arrived. Only the ctx error
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

// InFlight is how many sent messages await their outcome.
func (s *Sender) InFlight() int { return len(s.slots) }

// Close detaches the sender. Sends still awaiting their outcome end with OutcomeUnknown; wait
// for their outcomes first to avoid resending messages the broker accepted.
func (s *Sender) Close(ctx context.Context) error {
	return closeLink(ctx, s.conn, "closing the sender to "+s.target, s.link.Close, s.session)
}
