// Package copying is the copy mode of the transfer engine: it puts an exact copy of a selection
// of a source queue's messages on a target queue, and leaves the source untouched. It browses
// the source (a copy needs only browse there), sends what the ledger has not recorded as copied
// with a duplicate-detection id derived from each message's identity, and records each batch
// the target confirmed, so that a copy resumed by another process neither skips nor doubles a
// message. The ledger (copyLedger) is a copy's only record. It imports core, never move.
//
//   - copy.go: Engine, Copy, the copyLedger it needs and the CopyRun it reads
//   - run.go: finding, starting, resuming and abandoning copy runs in the ledger
//   - walk.go: browsing the source and sending to the target, batch by batch
//   - identity.go: what identifies a browsed message, and its duplicate id
//   - preflight.go: the plan's checks of a copy (the source is only read)
//   - ledger_book.go: the copyLedger over internal/ledger
package copying
