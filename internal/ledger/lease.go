package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// NewHolder names a lease holder: "host:pid:token", where token is 128 random bits from
// crypto/rand, so that no other process, on this host or any other, in a container or not,
// can share the name. Host and pid are there for people reading it; whether the holder still
// runs is told by its process's ledger session (see TakeLease), never by them.
func NewHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// TakeLease makes holder the only process that works on the run for ttl, by the database's
// clock. It succeeds when the lease is free, expired, or already holder's (then it is
// extended and keeps its TakenAt). Otherwise it fails with a *LeaseHeldError naming the
// holder and since when. A lease whose holder's process has ended (killed, crashed, on any
// host: its ledger session, which holds the Ledger's presence lock, is gone) is taken over at
// once, without waiting for it to lapse. Taking the lease, from nobody, over an expired holder
// or over one that has ended, appends a lease-taken event naming the previous holder. One
// statement: two processes racing for the same run cannot both win.
func (l *Ledger) TakeLease(ctx context.Context, runID, holder string, ttl time.Duration) (Lease, error) {
	return l.takeLease(ctx, runID, holder, "", ttl)
}

// takeOverLease is TakeLease that also takes the lease from gone, a holder whose process the
// caller knows to have ended although its lease has not lapsed yet (and whose ledger session
// may not have ended yet either). It takes it only if
// gone still holds it: a lease that another process took meanwhile is refused with a
// *LeaseHeldError as by TakeLease. The lease-taken event names gone as the previous holder.
func (l *Ledger) takeOverLease(ctx context.Context, runID, holder, gone string, ttl time.Duration) (Lease, error) {
	if gone == "" {
		return Lease{}, fmt.Errorf("taking over the lease on run %s: no previous holder named", runID)
	}
	return l.takeLease(ctx, runID, holder, gone, ttl)
}

func (l *Ledger) takeLease(ctx context.Context, runID, holder, gone string, ttl time.Duration) (Lease, error) {
	if holder == "" || ttl <= 0 {
		return Lease{}, fmt.Errorf("taking the lease on run %s: a holder and a positive ttl are needed (got %q, %s)", runID, holder, ttl)
	}
	key := l.presenceKey(ctx)
	var (
		prevHolder                          *string
		prevTaken, prevHeartbeat, prevUntil *time.Time
		got                                 Lease
		takenAt, heartbeatAt, expiresAt     *time.Time
	)
	// prev locks the row (FOR UPDATE waits for a concurrent taker and then reads what it
	// wrote), so the decision and the holder named in a refusal are both current.
	// holder_gone takes the previous holder's presence lock for this statement only: it can be
	// taken exactly when the session that held it, and so the holder's process, has ended.
	err := l.pool.QueryRow(ctx, `WITH prev AS (
		SELECT run_id, lease_holder, lease_taken_at, lease_heartbeat_at, lease_expires_at,
			(lease_holder IS DISTINCT FROM $2 AND lease_expires_at > now() AND lease_presence_key IS NOT NULL
				AND pg_try_advisory_xact_lock(lease_presence_key)) AS holder_gone
		FROM `+Schema+`.runs WHERE run_id = $1 FOR UPDATE
	), taken AS (
		UPDATE `+Schema+`.runs r SET lease_holder = $2,
			lease_taken_at = CASE WHEN prev.lease_holder = $2 AND prev.lease_expires_at > now()
				THEN prev.lease_taken_at ELSE now() END,
			lease_heartbeat_at = now(),
			lease_expires_at = now() + $3::interval,
			lease_presence_key = $5::bigint
		FROM prev
		WHERE r.run_id = prev.run_id
			AND (prev.lease_holder IS NULL OR prev.lease_expires_at <= now() OR prev.lease_holder = $2
				OR prev.lease_holder = NULLIF($4::text, '') OR prev.holder_gone)
		RETURNING r.lease_taken_at, r.lease_heartbeat_at, r.lease_expires_at
	), logged AS (
		INSERT INTO `+Schema+`.events (run_id, kind, detail)
		SELECT prev.run_id, 'lease-taken', jsonb_build_object('holder', $2::text, 'ttl_seconds', extract(epoch FROM $3::interval),
			'previous_holder', prev.lease_holder, 'previous_expires_at', prev.lease_expires_at,
			'previous_holder_gone', (prev.lease_holder = NULLIF($4::text, '') AND prev.lease_expires_at > now()) OR prev.holder_gone)
		FROM prev, taken
		WHERE prev.lease_holder IS DISTINCT FROM $2 OR prev.lease_expires_at <= now()
	)
	SELECT prev.lease_holder, prev.lease_taken_at, prev.lease_heartbeat_at, prev.lease_expires_at,
		taken.lease_taken_at, taken.lease_heartbeat_at, taken.lease_expires_at
	FROM prev LEFT JOIN taken ON true`,
		runID, holder, ttl, gone, key).Scan(&prevHolder, &prevTaken, &prevHeartbeat, &prevUntil, &takenAt, &heartbeatAt, &expiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, fmt.Errorf("taking the lease on run %s: %w", runID, ErrRunNotFound)
	}
	if err != nil {
		return Lease{}, l.wrapErr("taking the lease on run "+runID+" in the transfer ledger", err)
	}
	if takenAt == nil {
		return Lease{}, &LeaseHeldError{RunID: runID, Holder: describeHolder(prevHolder), Since: deref(prevTaken),
			HeartbeatAt: deref(prevHeartbeat), ExpiresAt: deref(prevUntil)}
	}
	got = Lease{Holder: holder, TakenAt: *takenAt, HeartbeatAt: deref(heartbeatAt), ExpiresAt: deref(expiresAt)}
	return got, nil
}

// RenewLease extends holder's lease on the run to ttl from now; call it well within the ttl
// (a third of it, say). It fails with ErrLeaseLost, naming the new holder, when another
// process took the run over after the lease expired, and then appends a lease-lost event:
// the caller must stop working on the run. A lease that expired but that nobody took is
// renewed, since nobody else can have worked on the run meanwhile.
func (l *Ledger) RenewLease(ctx context.Context, runID, holder string, ttl time.Duration) (Lease, error) {
	if holder == "" || ttl <= 0 {
		return Lease{}, fmt.Errorf("renewing the lease on run %s: a holder and a positive ttl are needed (got %q, %s)", runID, holder, ttl)
	}
	key := l.presenceKey(ctx)
	var current *string
	var takenAt, heartbeatAt, expiresAt *time.Time
	err := l.pool.QueryRow(ctx, `WITH cur AS (
		SELECT run_id, lease_holder FROM `+Schema+`.runs WHERE run_id = $1 FOR UPDATE
	), renewed AS (
		UPDATE `+Schema+`.runs r SET lease_heartbeat_at = now(), lease_expires_at = now() + $3::interval,
			lease_presence_key = $4::bigint
		FROM cur WHERE r.run_id = cur.run_id AND cur.lease_holder = $2
		RETURNING r.lease_taken_at, r.lease_heartbeat_at, r.lease_expires_at
	), lost AS (
		INSERT INTO `+Schema+`.events (run_id, kind, detail)
		SELECT cur.run_id, 'lease-lost', jsonb_build_object('holder', $2::text, 'now_held_by', cur.lease_holder)
		FROM cur WHERE cur.lease_holder IS DISTINCT FROM $2
	)
	SELECT cur.lease_holder, renewed.lease_taken_at, renewed.lease_heartbeat_at, renewed.lease_expires_at
	FROM cur LEFT JOIN renewed ON true`, runID, holder, ttl, key).Scan(&current, &takenAt, &heartbeatAt, &expiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, fmt.Errorf("renewing the lease on run %s: %w", runID, ErrRunNotFound)
	}
	if err != nil {
		return Lease{}, l.wrapErr("renewing the lease on run "+runID+" in the transfer ledger", err)
	}
	if takenAt == nil {
		return Lease{}, fmt.Errorf("renewing the lease on run %s as %s: %w (now held by %s): stop working on the run",
			runID, holder, ErrLeaseLost, describeHolder(current))
	}
	return Lease{Holder: holder, TakenAt: *takenAt, HeartbeatAt: deref(heartbeatAt), ExpiresAt: deref(expiresAt)}, nil
}

// ReleaseLease frees holder's lease on the run, so another apply may take it at once. It
// does nothing when holder does not hold the lease (it expired and was taken, or was
// released already), so it is safe to call on every way out.
func (l *Ledger) ReleaseLease(ctx context.Context, runID, holder string) error {
	_, err := l.pool.Exec(ctx, `UPDATE `+Schema+`.runs SET lease_holder = NULL, lease_taken_at = NULL,
		lease_heartbeat_at = NULL, lease_expires_at = NULL, lease_presence_key = NULL WHERE run_id = $1 AND lease_holder = $2`, runID, holder)
	return l.wrapErr("releasing the lease on run "+runID+" in the transfer ledger", err)
}
