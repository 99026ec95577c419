// Package harness is what `make bench` (tools/bench) and `make faults` (tools/faults) share to
// drive a transfer from outside, as an operator would: a terraform workspace and its applies, the
// processes they start, and the fills of numbered messages they count afterwards.
//
// # Rules
//
//   - A workspace is a main.tf of one artemis_queue_transfer (TransferConfig) and a CLI
//     configuration whose dev_overrides point terraform at the provider just built, so nothing
//     is fetched from a registry.
//   - Every apply runs in a process group of its own, so that a fault can signal or kill
//     terraform and the provider it started, and only them.
//   - A fill puts numbered messages on a queue with the pipelined AMQP sender; the number is
//     what a check counts each message by afterwards.
//
// It imports internal/artemis and internal/testenv, never the engine or the provider: it drives
// them through the terraform CLI only.
package harness
