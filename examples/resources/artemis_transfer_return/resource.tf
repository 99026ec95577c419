# Put the staged messages of one orphaned run back on the queue they came from. The run id is the
# suffix of its staging queue studio.transfer.<run id>, as artemis_orphaned_transfers lists it.
resource "artemis_transfer_return" "orders" {
  broker = "dc1"
  run_id = "3f2a9c01b7de-mq6hez28"

  # A return stopped by its timeout loses nothing; applying again returns what is still staged.
  # Default 1h.
  timeouts = {
    create = "2h"
  }
}

# Or, instead of naming runs, return every run on dc1 that has been orphaned for more than a day
# and still has its manifest (so the messages in flight when it died are settled at the target, not
# put on both brokers). Younger runs are left alone: whoever started them may still resume them
# by applying their transfer again. Do not also name one of these runs in another resource.
data "artemis_orphaned_transfers" "dc1" {
  brokers = ["dc1"]
}

resource "artemis_transfer_return" "stale" {
  for_each = {
    for t in data.artemis_orphaned_transfers.dc1.transfers : t.import_id => t
    if t.has_manifest && t.age_seconds > 86400
  }

  broker = each.value.broker
  run_id = each.value.run_id
}

# A return runs once. Afterwards the run is no longer listed, so the next plan shows its instance
# as destroyed: that only removes it from state, the messages stay where the return put them.

output "returned" {
  value = {
    for id, r in artemis_transfer_return.stale : id => "${r.messages_returned} to ${r.source_queue}, ${r.messages_relayed} settled at the target"
  }
}
