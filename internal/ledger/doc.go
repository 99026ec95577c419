// Package ledger keeps the bookkeeping of transfers in PostgreSQL: the runs (who started what,
// when, how far it got and how it ended), an append-only event log per run, a lease that
// fences a run to one process at a time, and the source message ids a copy has already put on
// the target. Artemis holds the messages; the ledger holds only bookkeeping.
//
// Open migrates the ledger's own schema (artemis_transfer) with migrations embedded in the
// binary; ConnectWith and SchemaStatus only read, for terraform plan, and Migrate migrates
// before the first write. Every call takes a context and is bounded by it; an outage of PostgreSQL surfaces as
// ErrUnavailable, which callers retry for a bounded time with RetryWithin and otherwise treat
// as "pause the run". The engine uses the ledger through a small interface of its own (the
// methods it needs), so it can run without one. Its files:
//
//   - errors.go: every exported error (ErrUnavailable, ErrRunNotFound, ErrRunExists,
//     ErrLeaseLost, ErrSchemaTooNew, LeaseHeldError, UnfinishedCopyError)
//   - outage.go: telling an outage of PostgreSQL from a refusal (SQLSTATEs by pgerrcode's
//     names), and RetryWithin
//   - ledger.go: Ledger, Open and ConnectWith, one pool; its errors say what it was doing and hide the password
//   - migrate.go, migrations/: the ledger's schema, migrated under an advisory lock
//   - runs.go: runs, their status and counters (both fenced by the lease; counter writes
//     numbered so that a retry adds once), and one unfinished copy per transfer
//   - events.go: the append-only event log of a run
//   - lease.go: the lease that fences a run to one process; presence.go: whether a holder's
//     process still runs, by an advisory lock its ledger session holds
//   - copied.go: the source message ids a copy has put on the target
package ledger
