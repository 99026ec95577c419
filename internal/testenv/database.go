package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// databaseTimeout bounds creating or dropping a database, connection included.
const databaseTimeout = 30 * time.Second

// Database is a database of one run or test on the test environment's PostgreSQL, so that
// nothing it records meets another's rows.
type Database struct {
	Name string
	DSN  string // the database's own DSN
	// server is the environment's postgres_dsn, to drop the database from.
	server string
}

// CreateDatabase creates prefix_<random> on the PostgreSQL at server (the environment's
// postgres_dsn).
func CreateDatabase(ctx context.Context, server, prefix string) (*Database, error) {
	u, err := url.Parse(server)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("the test environment's postgres_dsn is not a postgres:// URL")
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("naming a database: %w", err)
	}
	db := &Database{Name: prefix + "_" + hex.EncodeToString(b[:]), server: server}
	if err := db.exec(ctx, "CREATE DATABASE "+db.Name); err != nil {
		return nil, fmt.Errorf("creating database %s on the test PostgreSQL: %w", db.Name, err)
	}
	u.Path = "/" + db.Name
	db.DSN = u.String()
	return db, nil
}

// Drop removes the database, cutting any connection left to it (a killed process's). It
// runs also when ctx has been cancelled, bounded by databaseTimeout.
func (db *Database) Drop(ctx context.Context) error {
	if err := db.exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+db.Name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping database %s on the test PostgreSQL: %w", db.Name, err)
	}
	return nil
}

func (db *Database) exec(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, databaseTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, db.server)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}
