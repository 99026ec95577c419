package testenv

import (
	"context"
	"testing"
)

// NewDatabase creates a database of its own on the environment's PostgreSQL for one test, named
// prefix_<random>, and drops it when the test ends, so tests never see each other's rows. It
// returns the database's name and DSN. Without a PostgreSQL in the environment the test skips,
// or fails when the environment is required.
func (e *Env) NewDatabase(t testing.TB, prefix string) (name, dsn string) {
	t.Helper()
	if e.PostgresDSN == "" {
		if Required() {
			t.Fatalf("the test environment %s has no postgres_dsn", FilePath())
		}
		t.Skipf("the test environment %s has no postgres_dsn", FilePath())
	}
	db, err := CreateDatabase(context.Background(), e.PostgresDSN, prefix)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if err := db.Drop(context.Background()); err != nil {
			t.Errorf("%v", err)
		}
	})
	return db.Name, db.DSN
}
