package transfertest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Spec is a move of queue orders from broker dc1 to broker dc2: a spec for the tests of pure
// decisions, which never reach a broker.
func Spec() core.Spec {
	return core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "dc1", Queue: "orders"}, Target: core.Endpoint{Broker: "dc2", Queue: "orders"}}
}

// AbsoluteExpiry is a message's absolute-expiry-time in Unix ms, 0 when it has none.
func AbsoluteExpiry(m *amqp.Message) int64 {
	if m == nil || m.Properties == nil || m.Properties.AbsoluteExpiryTime == nil {
		return 0
	}
	return m.Properties.AbsoluteExpiryTime.UnixMilli()
}

// Short cuts s to its first 200 bytes, for a failure message.
func Short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// Describe prints a value with its Go type; long byte slices as length and hash.
func Describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "absent"
	case []byte:
		if len(x) > 64 {
			return fmt.Sprintf("[]byte(len %d, sha256 %x)", len(x), sha256.Sum256(x))
		}
	case [][]byte:
		parts := make([]string, len(x))
		for i, d := range x {
			parts[i] = Describe(d)
		}
		return "data[" + strings.Join(parts, ", ") + "]"
	case *string:
		if x == nil {
			return "absent"
		}
		return fmt.Sprintf("%q", *x)
	case *uint32:
		if x == nil {
			return "absent"
		}
		return fmt.Sprint(*x)
	case *time.Time:
		if x == nil {
			return "absent"
		}
		return x.UTC().Format(time.RFC3339Nano)
	}
	return Short(fmt.Sprintf("%T(%v)", v, v))
}

// Book is the Bookkeeper over a ledger for the tests (the provider has its own). Before each
// CreateRun it runs BeforeCreate, when set, so a test can look at the brokers at that moment.
type Book struct {
	Ledger       *ledger.Ledger
	BeforeCreate func(core.BookedRun)
}

var _ core.Bookkeeper = (*Book)(nil)

func (b *Book) CreateRun(ctx context.Context, r core.BookedRun) error {
	if b.BeforeCreate != nil {
		b.BeforeCreate(r)
	}
	return b.Ledger.CreateRun(ctx, ledger.Run{ID: r.ID, Fingerprint: r.SpecKey, Mode: ledger.Mode(r.Mode),
		SourceBroker: r.Source.Broker, SourceQueue: r.Source.Queue, TargetBroker: r.Target.Broker, TargetQueue: r.Target.Queue,
		Filter: r.Filter, SelectedIDs: r.SelectedIDs, T0: r.T0, CreatedBy: ledger.Creator{User: "test", Host: "test", Workspace: "default"}, CopyIdentity: r.CopyIdentity})
}

func (b *Book) RunCounts(ctx context.Context, runID string) (core.BookedCounts, bool, error) {
	run, err := b.Ledger.GetRun(ctx, runID)
	if errors.Is(err, ledger.ErrRunNotFound) {
		return core.BookedCounts{}, false, nil
	}
	if err != nil {
		return core.BookedCounts{}, false, err
	}
	c := run.Counters
	return core.BookedCounts{Staged: c.Staged, Relayed: c.Relayed, Resent: c.Resent, Returned: c.Returned}, true, nil
}

func (b *Book) TakeLease(ctx context.Context, runID, holder string, ttl time.Duration) error {
	_, err := b.Ledger.TakeLease(ctx, runID, holder, ttl)
	return err
}

func (b *Book) RenewLease(ctx context.Context, runID, holder string, ttl time.Duration) error {
	_, err := b.Ledger.RenewLease(ctx, runID, holder, ttl)
	return err
}

func (b *Book) ReleaseLease(ctx context.Context, runID, holder string) error {
	return b.Ledger.ReleaseLease(ctx, runID, holder)
}

func (b *Book) AddCounters(ctx context.Context, runID, holder string, seq int64, d core.BookedCounts) error {
	return b.Ledger.AddCountersOnce(ctx, runID, holder, seq, ledger.Counters{Staged: d.Staged, Relayed: d.Relayed, Resent: d.Resent, Returned: d.Returned})
}

func (b *Book) SetStatus(ctx context.Context, runID, holder, status string, detail map[string]any) error {
	return b.Ledger.SetStatus(ctx, runID, holder, ledger.Status(status), detail)
}
