// Package move is the move mode of the transfer engine: it moves a selection of messages from a
// queue on one broker to a queue on another without losing or doubling any, even when the
// process dies halfway. A run stages its selection broker-side into its own durable queue on the
// source (studio.transfer.<runId>), relays it over AMQP with a duplicate-detection id per
// message, and removes the staging queue when it is empty. Everything a run needs to resume
// lives on the source broker, so a fresh process can find and finish it, or return it. It
// imports core, never copying.
//
// Its files, in the order a run meets them:
//
//   - run.go: Engine and the orchestration of a run (Move, Resume, start, execute, work, stopped)
//   - names.go: the run's queues and its messages' duplicate ids
//   - preflight.go: a move's facts for the refusal rules, and the staging canary
//   - runs.go: finding unfinished runs; orphans.go: orphaned ones
//   - records.go: the run's records on the source broker (manifest, lease, in-flight record)
//   - staging.go, expiry.go: moving the selection into staging (never far ahead of the relay),
//     expiring messages window by window
//   - relay.go, links.go, batch.go: the relay loop, its links, and a batch's send and
//     confirmation (through core's Deliver)
//   - origin.go: what the staging move recorded on a message about its source
//   - return.go: putting a run's staged messages back on the source
package move
