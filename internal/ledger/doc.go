// Package ledger keeps the bookkeeping of transfers in PostgreSQL: the runs (who started what,
// when, how far it got and how it ended), an append-only event log per run, a lease that
// fences a run to one process at a time, and the source message ids a copy has already put on
// the target. Artemis holds the messages; the ledger holds only bookkeeping, never a message
// body or property value.
//
// It uses pgx and imports no other package of this module; the transfer engine uses it through
// a small interface of its own, so that a transfer can run without a ledger.
//
// # Opening a ledger
//
// Open (or OpenWith, for the pool's options) connects one pool and migrates the ledger's own
// schema, artemis_transfer, with the migrations embedded in the binary, under an advisory lock
// so that concurrent processes migrate once. ConnectWith connects without migrating and
// Ledger.SchemaStatus only reads, for terraform plan; Ledger.Migrate migrates before the first
// write. A schema newer than the binary is
// ErrSchemaTooNew, and is never downgraded.
//
// # Outages and retries
//
// Every call takes a context and is bounded by it. An outage of PostgreSQL (a connection that
// fails or times out, a server shutting down: SQLSTATEs by their pgerrcode names) is
// ErrUnavailable; a refusal (a wrong password, a constraint) is not. Callers retry an outage for
// a bounded time with RetryWithin and otherwise pause the run; a refusal is final. Errors say
// what was being done and never show the DSN's password.
//
// # Runs and leases
//
// A run's status and counters change only under the lease of the process that holds it
// (ErrLeaseLost otherwise), and every counter write is numbered, so that a retried write adds
// once. Whether a lease holder's process still runs is read from an advisory lock its ledger
// session holds, not guessed from a timestamp. A transfer has at most one unfinished copy run.
package ledger
