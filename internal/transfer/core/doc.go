// Package core is what both modes of the transfer engine share: a transfer's spec and a run's
// identity, the options, progress and its counting, pacing and waiting, which broker node a
// connection may reach, the ledger's bookkeeping, the one send/confirm/retry loop with the
// message it sends, the facts the refusal rules read from both brokers and the checks built on
// them, and the engine's errors. It imports neither mode: move and copying build on it.
//
//   - spec.go: Mode, Spec, Endpoint, Selection, Run, run ids
//   - setup.go: Setup (what every run works with) and Hooks; worker.go: one run in this process
//   - options.go: Options with their defaults and bounds, Result, the Progress snapshot
//   - progress.go, tally.go: tracking what a run did (each relayed message counted once) and
//     reporting it
//   - pace.go: holding every send to Options.MaxMessagesPerSecond; wait.go: waiting for a full
//     target, backoff
//   - deliver.go: sending a batch of copies and awaiting the target's outcomes, resending what
//     it refused for now; message.go: the copy of a message the target gets, routed as the
//     target queue's routing type; first_delivery.go: the proof that a run's first message
//     reached the target queue
//   - nodes.go: which node each connection of a run may reach
//   - bookkeeping.go: the Bookkeeper interface and a run's Book (lease, counters, status);
//     ledger_book.go: the Bookkeeper over internal/ledger
//   - facts.go: what the refusal rules need of both brokers; check.go: the check before a run;
//     dedup_probes.go, passed_checks.go: canaries and passes shared within a process
//   - memory.go: the memory a relaying process holds
//   - errors.go: the errors callers match, and which stops a next run resumes
package core
