package artemis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/Azure/go-amqp"
)

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
			wrong.Found = append(wrong.Found, nodeAt{URL: redactURL(shown), NodeID: got})
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
	prefix := fmt.Sprintf("connecting to broker %q at %s", c.cfg.Name, redactURL(shown))
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", prefix, ctx.Err())
	}
	saslRefused, noMechanism := saslRefusal(err)
	switch {
	case saslRefused:
		if user == "" {
			return fmt.Errorf("%s: the broker refused an anonymous login: set username and password: %w (%w)", prefix, ErrUnauthorized, err)
		}
		return fmt.Errorf("%s: the broker refused the credentials of user %q: check username and password: %w (%w)", prefix, user, ErrUnauthorized, err)
	case noMechanism:
		if user == "" {
			return fmt.Errorf("%s: the broker does not allow anonymous login: set username and password: %w (%w)", prefix, ErrUnauthorized, err)
		}
		return fmt.Errorf("%s: the broker offers no SASL mechanism this client supports (PLAIN, ANONYMOUS): %w (%w)", prefix, ErrUnauthorized, err)
	case untrustedCertificate(err):
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
	case notTLS(err):
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
