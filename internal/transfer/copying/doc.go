// Package copying is the copy mode of the transfer engine: it puts an exact copy of a selection
// of a source queue's messages on a target queue, and leaves the source untouched. It imports
// core, never move, and never the engine's front. (It is not named copy: that would shadow the
// builtin.)
//
// # How a copy works
//
// A copy browses the source, so it needs only browse permission there and never takes, moves
// or changes a source message. It sends what the ledger has not recorded as copied, each with
// a duplicate-detection id derived from the run and the message's identity, and records each
// batch the target confirmed, in one statement per batch. A copy resumed by another process
// therefore neither skips nor doubles a message: what the ledger records is not sent again,
// and what was sent but not recorded is dropped by the target's duplicate detection.
//
// # The ledger is its only record
//
// Unlike a move, a copy leaves nothing on the brokers to resume from: the ledger (NewLedgerBook
// over internal/ledger) holds its runs and what each copied, and a copy asked of an engine
// without one is refused. Its writes are fenced by the run's lease, so a process that lost the
// run stops.
//
// # Using it
//
// New builds a Copier over a core.Setup. Copier.Copy starts a copy of a core.Spec, or resumes
// its unfinished one; UnfinishedCopy finds a run by its id, ResumeCopy resumes it, and
// AbandonCopy ends one that will not be finished. A copy stopped before it finished is
// core.ErrInterrupted, and copying again resumes it.
package copying
