package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
)

// Client returns a client for a broker of the environment: as admin for fixtures and checks,
// otherwise as the limited transfer user.
func Client(t *testing.T, env *Env, broker string, admin bool) *artemis.Client {
	t.Helper()
	b := env.Broker(t, broker)
	user, password := env.TransferUser, env.TransferPassword
	if admin {
		user, password = env.AdminUser, env.AdminPassword
	}
	c, err := artemis.New(artemis.Config{Name: broker, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
		Username: user, Password: password, RequestTimeout: 70 * time.Second})
	if err != nil {
		t.Fatalf("client for %s: %v", broker, err)
	}
	return c
}

// OpenLedger opens (and migrates) the ledger at dsn and closes it when the test ends (before a
// database of NewDatabase is dropped: cleanups run last-registered first).
func OpenLedger(t *testing.T, dsn string) *ledger.Ledger {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := ledger.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("opening the ledger: %v", err)
	}
	t.Cleanup(l.Close)
	return l
}

// FixtureQueue creates an anycast queue on its own address for one test.
func FixtureQueue(t *testing.T, ctx context.Context, c *artemis.Client, name string) {
	t.Helper()
	CreateQueue(t, ctx, c, artemis.QueueSpec{Name: name, Durable: true, RingSize: -1, MaxConsumers: -1})
}

// CreateQueue creates a queue for one test and destroys it when the test ends.
func CreateQueue(t *testing.T, ctx context.Context, c *artemis.Client, spec artemis.QueueSpec) {
	t.Helper()
	if err := c.CreateQueue(ctx, spec, false); err != nil {
		t.Fatalf("creating queue %s: %v", spec.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.DestroyQueue(ctx, spec.Name)
	})
}
