// Package provider is the Terraform face of the Artemis provider: the provider block, the
// resources (artemis_queue_transfer, artemis_transfer_return, artemis_address, artemis_queue,
// artemis_address_settings) and the data sources (artemis_broker, artemis_queue,
// artemis_queues, artemis_orphaned_transfers, artemis_transfer_runs), with their schemas, plan
// checks, CRUD and import.
//
// It holds no broker logic. Data flows one way: this package calls internal/transfer for
// anything that moves or copies messages, and internal/artemis, internal/ledger and
// internal/preflight for facts and declarations; none of them imports it. Schema validators
// live in the validators package and plan modifiers in planmodifiers.
//
// # Configuration
//
// Configure resolves the provider block, with its ARTEMIS_* fallbacks read through injected
// functions, into one runtime that every resource and data source shares: a client per named
// broker, the transfer ledger (opened on first use, migrated before its first write), and
// what the transfers of one process share. Passwords, keys and DSNs are marked Sensitive and
// masked in every log.
//
// # Transfers
//
// A plan of artemis_queue_transfer connects to both brokers and reports the refusal rules'
// findings as diagnostics on the attribute at fault, so that a transfer that would lose
// messages fails at plan. Create runs the transfer under its timeout; the brokers and the
// ledger, not Terraform state, remember a run's progress, so an interrupted apply is resumed by
// the next one. Every diagnostic says what is safe and what to do next.
//
// # Broker objects
//
// artemis_address, artemis_queue and artemis_address_settings declare broker objects. A change
// the broker can make in place is an update; one it cannot is a replacement, and a replacement
// or destroy that would drop messages is refused rather than carried out.
package provider
