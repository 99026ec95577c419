# A target queue made like a source queue: what the artemis_queue data source reads from the
# source broker feeds the target's resources, one expression per attribute.
data "artemis_queue" "source" {
  broker = "dc1"
  name   = "orders"
}

resource "artemis_address" "target" {
  broker        = "dc2"
  name          = data.artemis_queue.source.address
  routing_types = [data.artemis_queue.source.routing_type]
}

resource "artemis_queue" "target" {
  broker                = "dc2"
  name                  = data.artemis_queue.source.name
  address               = artemis_address.target.name
  routing_type          = data.artemis_queue.source.routing_type
  durable               = data.artemis_queue.source.durable
  filter                = data.artemis_queue.source.filter
  max_consumers         = data.artemis_queue.source.max_consumers
  exclusive             = data.artemis_queue.source.exclusive
  last_value            = data.artemis_queue.source.last_value || data.artemis_queue.source.last_value_key != ""
  last_value_key        = data.artemis_queue.source.last_value_key
  purge_on_no_consumers = data.artemis_queue.source.purge_on_no_consumers
  ring_size             = data.artemis_queue.source.ring_size
  # Left at their defaults on purpose: a disabled target takes no messages, and an auto-delete
  # target may be deleted by the broker while it is empty, before the transfer fills it.
  # enabled     = data.artemis_queue.source.enabled
  # auto_delete = data.artemis_queue.source.auto_delete
}
