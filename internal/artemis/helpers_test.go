package artemis_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// What several of this package's tests share.

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// messagingClient builds a client for one broker of the test environment.
func messagingClient(t *testing.T, b testenv.Broker, user, password string, amqpURLs ...string) *artemis.Client {
	t.Helper()
	if len(amqpURLs) == 0 {
		amqpURLs = []string{b.AMQPURL}
	}
	c, err := artemis.New(artemis.Config{
		Name:           b.Name,
		AMQPURLs:       amqpURLs,
		ManagementURL:  b.ManagementURL,
		Username:       user,
		Password:       password,
		ConnectTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatalf("artemis.New: %v", err)
	}
	return c
}

// adminConnection connects to a broker as the admin user and closes the connection at the end.
func adminConnection(ctx context.Context, t *testing.T, env *testenv.Env, broker string) *artemis.Connection {
	t.Helper()
	c := messagingClient(t, env.Broker(t, broker), env.AdminUser, env.AdminPassword)
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func textMessage(id int) *amqp.Message {
	return &amqp.Message{
		Properties: &amqp.MessageProperties{MessageID: fmt.Sprintf("m-%d", id)},
		Data:       [][]byte{fmt.Appendf(nil, "body %d", id)},
	}
}

// sendAll sends n messages (ids 0..n-1) and waits until every one is accepted.
func sendAll(ctx context.Context, t *testing.T, conn *artemis.Connection, fqqn string, n int) {
	t.Helper()
	sendMessages(ctx, t, conn, fqqn, n, textMessage)
}

// sendMessages sends the n messages build makes (for ids 0..n-1) and waits until every one is
// accepted.
func sendMessages(ctx context.Context, t *testing.T, conn *artemis.Connection, fqqn string, n int, build func(id int) *amqp.Message) {
	t.Helper()
	s, err := conn.NewSender(ctx, fqqn, artemis.SenderOptions{})
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	defer func() { _ = s.Close(ctx) }()
	pending := make([]*artemis.PendingSend, 0, n)
	for i := range n {
		p, err := s.Send(ctx, build(i))
		if err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
		pending = append(pending, p)
	}
	for i, p := range pending {
		if err := p.Wait(ctx); err != nil {
			t.Fatalf("message %d not accepted: %v", i, err)
		}
	}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// expectNoDelivery fails the test if r delivers a message within half a second: why says
// what the delivery would have been beyond.
func expectNoDelivery(ctx context.Context, t *testing.T, r *artemis.Receiver, why string) {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if msg, err := r.Receive(waitCtx); err == nil {
		t.Fatalf("received %s %s", messageID(msg), why)
	}
}

// acceptAll settles msgs on r as accepted.
func acceptAll(ctx context.Context, t *testing.T, r *artemis.Receiver, msgs []*amqp.Message) {
	t.Helper()
	for _, m := range msgs {
		if err := r.Accept(ctx, m); err != nil {
			t.Fatalf("Accept: %v", err)
		}
	}
}

// receiverOnFilledQueue sends n numbered messages to a new queue named after name, and opens a
// receiver on it with opts that the test closes when it ends.
func receiverOnFilledQueue(ctx context.Context, t *testing.T, conn *artemis.Connection, name string, n int, opts artemis.ReceiverOptions) (fqqn string, r *artemis.Receiver) {
	t.Helper()
	_, fqqn = uniqueQueue(name)
	sendAll(ctx, t, conn, fqqn, n)
	r, err := conn.NewReceiver(ctx, fqqn, opts)
	if err != nil {
		t.Fatalf("NewReceiver: %v", err)
	}
	t.Cleanup(func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Close(closeCtx)
	})
	return fqqn, r
}

// onBrokers runs test once for each of brokers, as a subtest named after the broker, with a
// context that ends after timeout or with the subtest.
func onBrokers(t *testing.T, brokers []string, timeout time.Duration, test func(t *testing.T, ctx context.Context, broker string)) {
	t.Helper()
	for _, broker := range brokers {
		t.Run(broker, func(t *testing.T) { test(t, testContext(t, timeout), broker) })
	}
}
