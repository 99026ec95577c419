package transfertest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// The fidelity tests of a move and of a copy produce and consume STOMP messages and compare
// the management view an operator has of them.

// stompConn is a STOMP 1.2 connection to a broker's all-protocols acceptor (its core_url port),
// logged in as the environment's admin user.
type stompConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dialSTOMP(t *testing.T, ctx context.Context, env *testenv.Env, broker string) *stompConn {
	t.Helper()
	u, err := url.Parse(env.Broker(t, broker).CoreURL)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		t.Fatalf("STOMP to %s: %v", u.Host, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	s := &stompConn{t: t, conn: conn, r: bufio.NewReader(conn)}
	s.frame("CONNECT", map[string]string{"accept-version": "1.2", "host": u.Hostname(), "login": env.AdminUser, "passcode": env.AdminPassword}, "")
	s.expect("CONNECTED")
	return s
}

// frame sends a frame with its headers in a fixed order.
func (s *stompConn) frame(command string, h map[string]string, body string) {
	s.t.Helper()
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(command + "\n")
	for _, k := range keys {
		b.WriteString(k + ":" + h[k] + "\n")
	}
	b.WriteString("\n" + body + "\x00")
	if _, err := s.conn.Write([]byte(b.String())); err != nil {
		s.t.Fatalf("STOMP %s: %v", command, err)
	}
}

// stompUnescape decodes a STOMP 1.2 header value, in which ":" travels as a backslash and "c".
var stompUnescape = strings.NewReplacer(`\\`, `\`, `\c`, ":", `\n`, "\n", `\r`, "\r")

// expect reads the next frame, fails unless it is a want, and returns its headers (the first
// of repeated headers, as STOMP 1.2 says).
func (s *stompConn) expect(want string) map[string]string {
	s.t.Helper()
	frame, err := s.r.ReadString(0)
	if err != nil {
		s.t.Fatalf("STOMP: waiting for %s: %v", want, err)
	}
	head, _, _ := strings.Cut(strings.TrimLeft(frame, "\r\n"), "\n\n")
	lines := strings.Split(head, "\n")
	if lines[0] != want {
		s.t.Fatalf("STOMP: want %s, got %q", want, frame)
	}
	headers := map[string]string{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok {
			if _, seen := headers[k]; !seen {
				headers[k] = stompUnescape.Replace(v)
			}
		}
	}
	return headers
}

// SendSTOMP sends a message to queue on broker over STOMP 1.2 for each set of headers, with the
// body "body of <fid header>", and waits for each receipt.
func SendSTOMP(t *testing.T, ctx context.Context, env *testenv.Env, broker, queue string, headers []map[string]string) {
	t.Helper()
	s := dialSTOMP(t, ctx, env, broker)
	for i, h := range headers {
		all := map[string]string{"destination": queue, "destination-type": "ANYCAST", "receipt": fmt.Sprint(i)}
		for k, v := range h {
			all[k] = v
		}
		s.frame("SEND", all, "body of "+h["fid"])
		s.expect("RECEIPT")
	}
	s.frame("DISCONNECT", nil, "")
}

// ReceiveSTOMP consumes one message from queue on broker over STOMP 1.2 and returns its headers.
func ReceiveSTOMP(t *testing.T, ctx context.Context, env *testenv.Env, broker, queue string) map[string]string {
	t.Helper()
	s := dialSTOMP(t, ctx, env, broker)
	s.frame("SUBSCRIBE", map[string]string{"id": "0", "ack": "auto", "subscription-type": "ANYCAST", "destination": queue}, "")
	headers := s.expect("MESSAGE")
	s.frame("DISCONNECT", nil, "")
	return headers
}

// ListedByFid lists a queue's messages with the broker's management listMessages (the view an
// operator has in the console), by the property fid, failing unless there are count.
func ListedByFid(t *testing.T, ctx context.Context, c *artemis.Client, queue string, count int) map[string]map[string]any {
	t.Helper()
	// A broker confirms a message (a STOMP receipt included) once it is stored and routed; its
	// queue takes it in, and lists it, a moment later on its own executor. So the listing is
	// read again, for a few seconds at most, until it holds count messages.
	var out map[string]map[string]any
	for attempt := 0; attempt < 50; attempt++ {
		msgs, err := c.ListMessages(ctx, queue, "")
		if err != nil {
			t.Fatal(err)
		}
		out = map[string]map[string]any{}
		for _, m := range msgs {
			out[fmt.Sprint(m["fid"])] = m
		}
		if len(out) >= count {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(out) != count {
		t.Fatalf("listMessages of %s on %s: %d messages, want %d", queue, c.Name(), len(out), count)
	}
	return out
}
