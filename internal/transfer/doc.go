// Package transfer is the engine's front: one Engine that moves or copies messages from a queue
// on one broker to a queue on another, and switches on the transfer's mode once. Callers (the
// provider) import only this package; the names they need from the modes are re-exported here.
//
// The modes live in packages of their own, which never import each other:
//
//   - core: what both modes share (the spec, options, progress, the ledger's bookkeeping, the
//     send/confirm loop, the facts the refusal rules read)
//   - move: stage on the source, relay, resume, return, orphans
//   - copying: browse the source, copy what the ledger has not recorded
//
// A lower package never reaches up: core, move and copying build on internal/artemis,
// internal/preflight and internal/ledger and never import this package, and nothing here knows
// of Terraform.
//
// # Running a transfer
//
// An Engine holds the two brokers' clients, the Options, the ledger (a Bookkeeper, or nil for
// none) and what the transfers of one process share. Preflight (PreflightWithoutWrites, for a
// plan that may not write) returns the refusal rules' findings; Run starts a transfer of a Spec,
// or resumes its unfinished run; Resume, Return and ReturnOrphan act on a run by its id. Every
// call takes a context and stops promptly when it is cancelled: a stopped run is
// ErrInterrupted, nothing is lost, and running the same transfer again resumes it, because the
// brokers and the ledger, not the caller, remember how far a run got.
package transfer
