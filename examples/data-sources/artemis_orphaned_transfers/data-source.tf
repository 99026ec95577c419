# Transfer runs on dc1 that died with nobody to resume them: their messages wait in the run's
# staging queue, safe but out of reach of the source queue's consumers. A run being staged or
# relayed right now is never listed.
data "artemis_orphaned_transfers" "dc1" {
  brokers = ["dc1"] # default: every broker of the provider
}

# One line per run: enough to decide whether to adopt it (terraform import with its import_id,
# then apply finishes it) or to return it with artemis_transfer_return.
output "orphaned_runs" {
  value = {
    for t in data.artemis_orphaned_transfers.dc1.transfers : t.import_id => {
      from     = t.source_queue
      to       = t.target_broker == "" ? "(no manifest)" : "${t.target_broker}/${t.target_queue}"
      staged   = t.message_count
      parked   = t.quarantined_count
      age_days = floor(t.age_seconds / 86400)
    }
  }
}
