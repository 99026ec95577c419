// Package faults is the fault harness of `make faults`: seeded iterations of a transfer run by
// the real terraform CLI over real brokers, one fault each, a recovery as an operator would do
// it (apply again, a bounded number of times), and a checker that counts every message by its
// unique producer id afterwards. Its results regenerate the docs page of fault-tolerance
// figures.
//
// # How an iteration runs
//
// A plan (a fault kind and its instant) is drawn from a seed, so any iteration can be replayed
// with SEED and KIND. The iteration fills fresh queues, writes a workspace, applies with the
// fault injected (a kill of terraform, the provider or a broker, a cut or stalled connection, a
// full target, a held lock, a stopped PostgreSQL), then applies again until terraform succeeds
// or the budget of applies is spent. The checker then drains the target and the source and
// tallies each producer id.
//
// # What counts as exact
//
// A move is exact when every produced message is on the target once and nowhere else; a copy
// when every selected message is on the target once and the source is as it was, in the order
// the source broker holds after any restart of its own. Staging queues left behind and the
// ledger's account of a copy are checked too. Anything else is an iteration with a problem,
// which the results keep, and the page publishes, even after a later run of its kind.
//
// Terraform workspaces, applies, process lookup and fills come from tools/harness; the
// ledger database from internal/testenv.
package faults
