package transfertest

import (
	"context"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// LedgerDSN creates a database of its own on the environment's PostgreSQL for one test, and
// drops it when the test ends, so tests never see each other's runs.
func LedgerDSN(t *testing.T, env *testenv.Env) string {
	t.Helper()
	_, dsn := env.NewDatabase(t, "transfer_test")
	return dsn
}

// EventKinds lists a run's event kinds in order.
func EventKinds(t *testing.T, ctx context.Context, l *ledger.Ledger, runID string) []string {
	t.Helper()
	events, err := l.Events(ctx, runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := make([]string, len(events))
	for i, e := range events {
		kinds[i] = string(e.Kind)
	}
	return kinds
}
