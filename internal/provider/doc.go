// Package provider is the Terraform face of the Artemis provider: schemas, plan checks, CRUD and
// import. Broker logic lives in lower packages; schema validators live in validators/, plan
// modifiers in planmodifiers/.
//
//	provider.go                       the provider: its schema, Configure, resources and data sources
//	provider_config.go                the provider block and ARTEMIS_* fallbacks, resolved into a runtime
//	broker_config.go                  one broker's settings checked into an artemis.Config; secrets to mask
//	runtime.go                        providerRuntime, what resources and data sources share: clients and more
//	ledger_book.go                    the runtime's transfer ledger, opened on first use, and who creates runs
//	run_hooks.go                      test hooks that stop a run at an exact point
//	resource_queue_transfer.go        artemis_queue_transfer: schema, plan, CRUD and import
//	queue_transfer_model.go           its model and the mapping to and from the engine
//	queue_transfer_run.go             how it builds the engine, checks a plan and runs a transfer
//	queue_transfer_diagnostics.go     its diagnostics from findings, refusals and errors; attribute paths
//	run_report.go                     a run's progress lines and the summary of a completed apply
//	resource_transfer_return.go       artemis_transfer_return
//	resource_address.go               artemis_address: an address and its routing types
//	resource_queue.go                 artemis_queue: a queue's shape, updated in place or replaced
//	queue_model.go                    its model and the mapping to and from the broker's queue
//	resource_address_settings.go      artemis_address_settings: the entry for one match
//	address_settings_model.go         its attributes, the broker's keys and defaults for them
//	broker_objects.go                 what the three share: ids, import, the refusal to drop messages
//	data_source_broker.go             artemis_broker
//	data_source_queue.go              artemis_queue
//	data_source_queues.go             artemis_queues
//	data_source_orphaned_transfers.go artemis_orphaned_transfers
//	data_source_transfer_runs.go      artemis_transfer_runs
package provider
