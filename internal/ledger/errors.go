package ledger

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnavailable marks an error as "the ledger's PostgreSQL cannot be reached right now":
// connection refused or lost, the server shutting down or starting (SQLSTATE 57P01, 57P02,
// 57P03), a connection exception (class 08), too many connections (53300), or a retry budget
// spent. The engine treats it as "pause the run and resume it later", never as a failed
// transfer. Match it with errors.Is; the wrapped cause keeps any *pgconn.PgError.
var ErrUnavailable = errors.New("transfer ledger unavailable")

// ErrRunNotFound is returned when the ledger has no run with the given id.
var ErrRunNotFound = errors.New("run not found in the transfer ledger")

// ErrRunExists is returned by CreateRun when the ledger already has a run with that id:
// the caller resumes it (GetRun) instead.
var ErrRunExists = errors.New("run already in the transfer ledger")

// ErrLeaseLost is returned by RenewLease and fenced writes (AddCounters with a holder) when
// the caller no longer holds the run's lease: another process took it over after it expired,
// so the caller must stop working on the run at once.
var ErrLeaseLost = errors.New("lease on the run lost")

// ErrSchemaTooNew is returned by Open when the database holds a ledger schema migrated by a
// newer provider than this one: its tables may mean something this provider does not know.
var ErrSchemaTooNew = errors.New("ledger schema is newer than this provider")

// LeaseHeldError is returned by TakeLease when another holder has a live lease on the run:
// another apply (another machine, CI job or state) is working on it right now.
type LeaseHeldError struct {
	RunID string
	// Holder names the process holding the lease (host, pid and a random part; see NewHolder).
	Holder string
	// Since is when the holder took the lease, by the database's clock.
	Since time.Time
	// HeartbeatAt is when the holder last renewed it; ExpiresAt is when it lapses unless
	// renewed again, after which another holder may take the run over.
	HeartbeatAt time.Time
	ExpiresAt   time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("run %s is being worked on by %s since %s (last heartbeat %s): "+
		"wait for that apply to finish; if that process is gone, its lease lapses at %s and the run can be resumed then",
		e.RunID, e.Holder, e.Since.UTC().Format(time.RFC3339), e.HeartbeatAt.UTC().Format(time.RFC3339),
		e.ExpiresAt.UTC().Format(time.RFC3339))
}

// unfinishedCopyIndex is the unique index (migration 0003) that allows one unfinished copy
// per transfer fingerprint.
const unfinishedCopyIndex = "runs_one_unfinished_copy_idx"

// UnfinishedCopyError is returned by CreateRun for a copy whose transfer (source queue,
// target and selection: its fingerprint) already has an unfinished copy in the ledger, most
// often one another apply created a moment before. The caller resumes that copy (or is refused
// by its lease) instead of starting a second one, which would copy every message again.
type UnfinishedCopyError struct {
	Fingerprint string
	// RunID is the unfinished copy's run, and Holder the process whose live lease works on it
	// ("" when none does); both "" when the ledger could not say (the copy finished meanwhile).
	RunID, Holder string
}

func (e *UnfinishedCopyError) Error() string {
	run := "an unfinished copy"
	if e.RunID != "" {
		run = "unfinished copy run " + e.RunID
	}
	if e.Holder != "" {
		run += " (being worked on by " + e.Holder + ")"
	}
	return fmt.Sprintf("transfer %s already has %s in the transfer ledger, and only one copy of a transfer may be unfinished "+
		"at a time: wait for the apply that works on it to finish, or apply again to resume it once it stopped", e.Fingerprint, run)
}
