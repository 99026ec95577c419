# The application queues of broker dc1 whose names start with "orders.", anycast only. The
# broker's internal queues and the transfers' own studio.transfer.* queues are left out.
data "artemis_queues" "orders" {
  broker       = "dc1"
  name_regex   = "^orders\\."
  routing_type = "ANYCAST"
}

# One transfer per listed queue, each into the queue of the same name on dc2 (which must exist).
# Keys are queue names, read at plan time: a queue created later becomes a new transfer at the
# next plan, and a deleted one drops a completed transfer from state (that only forgets it).
resource "artemis_queue_transfer" "orders" {
  for_each = data.artemis_queues.orders.queues

  source = { broker = "dc1", queue = each.key }
  target = { broker = "dc2", queue = each.key }
}

output "orders_depths" {
  value = { for name, q in data.artemis_queues.orders.queues : name => q.message_count }
}
