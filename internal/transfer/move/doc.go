// Package move is the move mode of the transfer engine: it moves a selection of messages from a
// queue on one broker to a queue on another without losing or doubling any, even when the
// process dies halfway. It imports core, never copying, and never the engine's front.
//
// # How a run moves messages
//
// A run stages its selection broker-side into a durable queue of its own on the source
// (StagingQueue, studio.transfer.<runId>), never far ahead of the relay, and in windows where
// messages are about to expire. The relay sends each staged message to the target with a
// duplicate-detection id derived from the run and the message (DuplicateID), and accepts it
// in staging only once the target has confirmed it, so a message is always on at least one
// broker, and the target's duplicate detection drops any that is sent twice. The staging
// queue is removed when it is empty.
//
// # What the source broker remembers
//
// Everything a run needs to resume lives on the source broker, not in this process: a manifest
// queue (ManifestQueue) holds the run's record, and is created first and removed last, so that
// a run whose manifest is there can always be resumed. A process holds a run by its lease, a
// consumer on the manifest queue, which admits one: a second process is refused, and checks its
// lease before every call that changes the run's queues. The next apply of the same transfer
// finds an unfinished run (unfinishedRuns) and resumes it, returns it, or reports it as
// an orphan, whatever instant the process was stopped at.
//
// # Using it
//
// New builds a Mover over a core.Setup. Mover.Move starts a run of a core.Spec, or resumes its
// unfinished one; Resume, Return and ReturnOrphan act on a run by its id; Preflight gathers a
// move's facts for the refusal rules. A run stopped before it finished is core.ErrInterrupted:
// nothing is lost, and moving again resumes it.
package move
