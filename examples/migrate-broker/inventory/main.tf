# Step one of retiring a broker, run while the old broker is up: read every queue of the old
# broker whose name matches queue_pattern, with its address's settings, and write them down.
# Step two declares the new broker's objects from that file, so that its plan no longer reads
# the old broker, and keeps them once the old broker is gone:
#
#   terraform -chdir=inventory init
#   terraform -chdir=inventory apply
#   terraform -chdir=inventory output -json inventory > inventory.auto.tfvars.json
#
# Commit inventory.auto.tfvars.json beside step two's main.tf; run this again (and commit) only
# to take in queues made on the old broker since.

variable "old_broker" {
  description = "Key, in the provider's brokers, of the broker to retire."
  type        = string
  default     = "old"
}

variable "queue_pattern" {
  description = "RE2 pattern of the names of the queues to migrate."
  type        = string
  default     = "^app\\."
}

provider "artemis" {}

data "artemis_queues" "old" {
  broker     = var.old_broker
  name_regex = var.queue_pattern
}

data "artemis_queue" "old" {
  for_each = toset(data.artemis_queues.old.names)
  broker   = var.old_broker
  name     = each.key
}

locals {
  # The queues of each address: they share its routing types and its address settings.
  by_address = { for name, q in data.artemis_queue.old : q.address => q... }
}

output "inventory" {
  description = "The old broker's queues and addresses, as step two's variables queues and addresses take them."
  value = {
    # The settings the old broker applies to each address: every matching entry merged, its
    # defaults filled in, every field the artemis_queue data source reads.
    addresses = { for address, qs in local.by_address : address => {
      routing_types = distinct([for q in qs : q.routing_type])
      settings      = qs[0].address_settings
    } }
    queues = { for name, q in data.artemis_queue.old : name => {
      address               = q.address
      routing_type          = q.routing_type
      durable               = q.durable
      filter                = q.filter
      max_consumers         = q.max_consumers
      exclusive             = q.exclusive
      last_value            = q.last_value || q.last_value_key != ""
      last_value_key        = q.last_value_key
      purge_on_no_consumers = q.purge_on_no_consumers
      ring_size             = q.ring_size
    } }
  }
}
