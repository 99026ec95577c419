package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server, err := pgx.Connect(ctx, e.PostgresDSN)
	if err != nil {
		t.Fatalf("connecting to the test PostgreSQL: %v", err)
	}
	defer server.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name = prefix + "_" + hex.EncodeToString(b[:])
	if _, err := server.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, e.PostgresDSN)
		if err != nil {
			t.Errorf("connecting to drop database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	u, err := url.Parse(e.PostgresDSN)
	if err != nil {
		t.Fatalf("postgres_dsn of the test environment is not a URL: %v", err)
	}
	u.Path = "/" + name
	return name, u.String()
}
