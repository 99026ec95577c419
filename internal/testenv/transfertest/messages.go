package transfertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// ProduceNumbered sends n durable messages with message ids "<prefix>-<i>" to a queue, with
// our own client: fast fixtures for the fault tests (fidelity tests use other clients).
func ProduceNumbered(t *testing.T, ctx context.Context, c *artemis.Client, queue, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	Produce(t, ctx, c, queue, n, func(i int) *amqp.Message {
		ids[i] = prefix + "-" + strconv.Itoa(i)
		now := time.Now()
		return &amqp.Message{
			Header:                &amqp.MessageHeader{Durable: true},
			Properties:            &amqp.MessageProperties{MessageID: ids[i], CreationTime: &now},
			ApplicationProperties: map[string]any{"n": int64(i)},
			Data:                  [][]byte{bytes.Repeat([]byte{'x'}, 200)},
		}
	})
	return ids
}

// Produce sends the n messages build makes to a queue on its own address, pipelined, and waits
// until the broker has stored them all.
func Produce(t *testing.T, ctx context.Context, c *artemis.Client, queue string, n int, build func(i int) *amqp.Message) {
	t.Helper()
	ProduceTo(t, ctx, c, queue+"::"+queue, n, build)
}

// ProduceTo is Produce to a fully qualified queue name, address::queue.
func ProduceTo(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string, n int, build func(i int) *amqp.Message) {
	t.Helper()
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := conn.NewSender(ctx, fqqn, artemis.SenderOptions{MaxInFlight: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	pending := make([]*artemis.PendingSend, 0, n)
	for i := 0; i < n; i++ {
		p, err := s.Send(ctx, build(i))
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	for _, p := range pending {
		if err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// BrowseIDs returns the message ids on a queue, without consuming them.
func BrowseIDs(t *testing.T, ctx context.Context, c *artemis.Client, queue string) []string {
	t.Helper()
	var ids []string
	for _, msg := range BrowseAll(t, ctx, c, queue) {
		ids = append(ids, MessageIDOf(msg))
	}
	sort.Strings(ids)
	return ids
}

// BrowseAll returns the messages of a queue in its order, without consuming them: every
// message a browser can see (VisibleCount).
func BrowseAll(t *testing.T, ctx context.Context, c *artemis.Client, queue string) []*amqp.Message {
	t.Helper()
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	visible := VisibleCount(t, ctx, c, queue)
	b, err := conn.NewBrowser(ctx, queue+"::"+queue, artemis.BrowserOptions{Credit: 1000, IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	var out []*amqp.Message
	for i := 0; i < 2_000_000 && int64(len(out)) < visible; i++ {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		out = append(out, msg)
	}
	return out
}

// ConsumeArriving consumes what a queue delivers until nothing arrives for quiet, without
// waiting for its visible count: for a queue whose count still includes messages the broker
// will not deliver (expired ones, which it removes only when it tries to deliver them).
func ConsumeArriving(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string, quiet time.Duration) []*amqp.Message {
	t.Helper()
	return ConsumeWhile(t, ctx, c, fqqn, func(int) time.Duration { return quiet })
}

// ConsumeAll consumes every message of a queue and returns them.
func ConsumeAll(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string) []*amqp.Message {
	t.Helper()
	queue := fqqn
	if _, q, ok := strings.Cut(fqqn, "::"); ok {
		queue = q
	}
	visible := VisibleCount(t, ctx, c, queue)
	// Every visible message is waited for; after them, a short wait shows any doubles that
	// arrived late (the count read first already includes those of a finished run).
	return ConsumeWhile(t, ctx, c, fqqn, func(got int) time.Duration {
		if int64(got) < visible {
			return time.Minute
		}
		return time.Second
	})
}

// Consumer opens a receiver on fqqn with the given credit on a connection of its own; closing
// it closes the receiver and the connection.
func Consumer(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string, credit int) (r *artemis.Receiver, closeConsumer func()) {
	t.Helper()
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err = conn.NewReceiver(ctx, fqqn, artemis.ReceiverOptions{Credit: credit})
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	return r, func() {
		_ = r.Close(ctx)
		conn.Close()
	}
}

// ConsumeWhile consumes and accepts a queue's messages until none arrives within wait(number
// received so far).
func ConsumeWhile(t *testing.T, ctx context.Context, c *artemis.Client, fqqn string, wait func(got int) time.Duration) []*amqp.Message {
	t.Helper()
	r, closeConsumer := Consumer(t, ctx, c, fqqn, 1000)
	defer closeConsumer()
	var out []*amqp.Message
	for i := 0; i < 2_000_000; i++ {
		waitCtx, cancel := context.WithTimeout(ctx, wait(len(out)))
		msg, err := r.Receive(waitCtx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Accept(ctx, msg); err != nil {
			t.Fatal(err)
		}
		out = append(out, msg)
	}
	return out
}

// MessageIDOf is a message's message-id as a string, "" for none.
func MessageIDOf(msg *amqp.Message) string {
	if msg.Properties == nil || msg.Properties.MessageID == nil {
		return ""
	}
	return fmt.Sprint(msg.Properties.MessageID)
}

// CheckSameSet fails unless got holds exactly want, each once.
func CheckSameSet(t *testing.T, want []string, got []*amqp.Message) {
	t.Helper()
	seen := map[string]int{}
	for _, m := range got {
		seen[MessageIDOf(m)]++
	}
	lost, doubled := 0, 0
	for _, id := range want {
		switch seen[id] {
		case 0:
			lost++
		case 1:
		default:
			doubled++
		}
		delete(seen, id)
	}
	if lost > 0 || doubled > 0 || len(seen) > 0 || len(got) != len(want) {
		t.Fatalf("target holds %d messages for %d wanted: %d lost, %d doubled, %d unexpected", len(got), len(want), lost, doubled, len(seen))
	}
}
