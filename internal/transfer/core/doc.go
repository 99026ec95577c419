// Package core is what both modes of the transfer engine share: a transfer's Spec and a run's
// identity, the Options with their defaults and bounds, Progress and the counting behind it,
// pacing and waiting, which broker node a connection may reach, the ledger's bookkeeping, the
// one send/confirm/retry loop with the message it sends, the facts the refusal rules read from
// both brokers and the checks built on them, and the engine's errors.
//
// It imports neither mode: move and copying build on it, and what one mode needs of the other
// moves here. It builds on internal/artemis, internal/preflight and internal/ledger only.
//
// # A run
//
// Setup is what every run works with: the two brokers' clients, the Options, the Hooks, the
// Bookkeeper (nil: no ledger) and the duplicate probes and passed checks the transfers of one
// process share. A Worker is one run in this process: it opens the run's connections on the
// nodes the run is pinned to (ConnectRunNode), sends through Worker.Deliver, which resends what
// the target refuses for now and reports each accepted copy in order, and counts every relayed
// message once, whatever retries it took. A run's lease, counters and status go through a Book
// over the Bookkeeper.
//
// # Stopping and resuming
//
// Every wait (pacing to Options.MaxMessagesPerSecond, a full target, Backoff between retries)
// honours its context. A stop the next run resumes is ErrInterrupted; Resumable says whether an
// error is one. Hooks stop a run at an exact point (a named Point, or after a count of sends or
// confirmations) so that tests do not depend on a sleep.
package core
