package ledger

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// presence tells other processes that this one is alive: a session of its own on the ledger's
// PostgreSQL holds an advisory lock on a random key for as long as the Ledger is open. The key
// goes into the lease of every run the process holds, so another process can tell, in the same
// statement that takes a lease, whether the holder still runs: PostgreSQL frees a session's
// locks when the session ends, which it does when the process dies (killed, crashed) on any
// host or container. A host name and a pid cannot tell that: two containers with the same host
// name each see the other's pids as not running.
type presence struct {
	mu     sync.Mutex
	config *pgx.ConnConfig
	conn   *pgx.Conn
	key    int64
	closed bool
}

// presenceKey is the advisory lock key this process holds, taking it first when its session
// is not open (the first lease, or the session was lost with the server). Nil when it cannot
// be taken now: the lease then relies on its expiry alone, as with a holder that is unknown.
func (l *Ledger) presenceKey(ctx context.Context) *int64 {
	p := l.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if p.conn != nil {
		if err := p.conn.Ping(ctx); err == nil {
			return &p.key
		}
		_ = p.conn.Close(ctx)
		p.conn = nil
	}
	conn, err := pgx.ConnectConfig(ctx, p.config)
	if err != nil {
		return nil
	}
	for range 3 { // a random 64-bit key is taken by another session only by a failure of crypto/rand
		var b [8]byte
		_, _ = rand.Read(b[:])
		key := int64(binary.BigEndian.Uint64(b[:]))
		var locked bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&locked); err != nil {
			break
		}
		if locked {
			p.conn, p.key = conn, key
			return &p.key
		}
	}
	_ = conn.Close(ctx)
	return nil
}

// close ends the presence session: the leases this process still holds can be taken over.
func (p *presence) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.conn != nil {
		// The server ends a closed session's locks only once its backend has exited, a moment
		// after the close: unlocking first frees the leases by the time Close returns.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = p.conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
		_ = p.conn.Close(ctx)
		p.conn = nil
	}
}

// holderGoneSQL is true for a run whose lease holder's process has ended, as its presence lock
// shows (see presence), without taking the lock: for reading runs.
const holderGoneSQL = `(lease_presence_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_locks
	WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = ((lease_presence_key >> 32) & 4294967295)::oid
		AND objid = (lease_presence_key & 4294967295)::oid))`
