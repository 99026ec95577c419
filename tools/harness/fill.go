package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Application properties every filled message carries. They survive our relay and
// `artemis transfer` alike (a JMS producer replaces the message id, not the properties), so
// the target can be checked for every message exactly once.
const (
	SeqProperty  = "bench_seq"  // 0..count-1
	FillProperty = "bench_fill" // the fill's tag: a stray message from another fill shows
	// duplicateIDProperty is Artemis's duplicate-detection id, which the relay sets on every copy.
	duplicateIDProperty = "_AMQ_DUPL_ID"
)

// FillInFlightBytes bounds the bytes a fill leaves unconfirmed per sender.
const FillInFlightBytes = 32 << 20

// FillResult says how a queue was filled.
type FillResult struct {
	Seconds    float64 `json:"seconds"`
	MsgsPerSec float64 `json:"msgs_per_s"`
}

// Fill puts count durable messages of size bytes on queue (anycast, on its own address) with
// our pipelined AMQP sender, the broker confirming each one. Small messages go through two
// connections at once, which is what makes a fill of 100,000 take seconds. Every message
// carries SeqProperty and FillProperty, and a message id "<tag>-<seq>".
func Fill(ctx context.Context, c *artemis.Client, queue string, count, size int, tag string) (FillResult, error) {
	start := time.Now()
	senders := 1
	if size <= 64<<10 && count >= 1000 {
		senders = 2
	}
	body := Body(size)
	inFlight := max(1, min(2000, FillInFlightBytes/max(size, 1)))
	errs := make([]error, senders)
	var wg sync.WaitGroup
	for w := 0; w < senders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = fillShare(ctx, c, queue, count, senders, w, body, inFlight, tag, "")
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return FillResult{}, fmt.Errorf("filling %s on broker %q with %d messages of %s: %w", queue, c.Name(), count, SizeName(size), err)
	}
	secs := time.Since(start).Seconds()
	return FillResult{Seconds: secs, MsgsPerSec: float64(count) / secs}, nil
}

// Body is a message body of size bytes.
func Body(size int) []byte { return bytes.Repeat([]byte("artemis-bench-"), size/14+1)[:size] }

// SendNumbered sends count messages of size bytes on queue (as Fill numbers them, tagged tag)
// through one sender that leaves up to inFlight unconfirmed, as the relay's sender does. With
// dupPrefix set, each also carries the duplicate id dupPrefix<seq>, as the relay's copies do.
func SendNumbered(ctx context.Context, c *artemis.Client, queue string, count, size, inFlight int, tag, dupPrefix string) error {
	return fillShare(ctx, c, queue, count, 1, 0, Body(size), inFlight, tag, dupPrefix)
}

// fillShare sends the messages whose sequence number is w modulo senders. With dupPrefix set,
// each also carries the duplicate id dupPrefix<seq>, as the relay's copies do.
func fillShare(ctx context.Context, c *artemis.Client, queue string, count, senders, w int, body []byte, inFlight int, tag, dupPrefix string) error {
	conn, err := c.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	s, err := conn.NewSender(ctx, queue+"::"+queue, artemis.SenderOptions{MaxInFlight: inFlight})
	if err != nil {
		return err
	}
	defer s.Close(context.WithoutCancel(ctx)) //nolint:errcheck // every outcome is awaited below
	// Outcomes arrive in order; the oldest are checked as the fill goes, so the list of
	// pending sends stays near the in-flight bound.
	var pending []*artemis.PendingSend
	check := func(block bool) error {
		for len(pending) > 0 {
			p := pending[0]
			if !block {
				select {
				case <-p.Done():
				default:
					return nil
				}
			}
			if err := p.Wait(ctx); err != nil {
				return err
			}
			pending = pending[1:]
		}
		return nil
	}
	for seq := w; seq < count; seq += senders {
		now := time.Now()
		msg := &amqp.Message{
			Header:                &amqp.MessageHeader{Durable: true},
			Properties:            &amqp.MessageProperties{MessageID: fmt.Sprintf("%s-%d", tag, seq), CreationTime: &now},
			ApplicationProperties: map[string]any{SeqProperty: int64(seq), FillProperty: tag},
			Data:                  [][]byte{body},
		}
		if dupPrefix != "" {
			msg.ApplicationProperties[duplicateIDProperty] = dupPrefix + strconv.Itoa(seq)
		}
		p, err := s.Send(ctx, msg)
		if err != nil {
			return err
		}
		pending = append(pending, p)
		if err := check(false); err != nil {
			return err
		}
	}
	return check(true)
}

// SizeName writes a byte size the way the benchmark's cases are named: 1 KiB, 10 MiB, 700 B.
func SizeName(size int) string {
	const kib, mib = 1 << 10, 1 << 20
	switch {
	case size >= mib && size%mib == 0:
		return fmt.Sprintf("%d MiB", size/mib)
	case size >= kib && size%kib == 0:
		return fmt.Sprintf("%d KiB", size/kib)
	default:
		return fmt.Sprintf("%d B", size)
	}
}
