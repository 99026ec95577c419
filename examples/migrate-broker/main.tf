# Retire a broker: every queue of the old broker whose name matches queue_pattern is declared on
# the new broker like the source (its address, its queue, its address's settings) and moved
# there, in one `terraform apply`. A second apply plans no changes.
#
# The brokers come from ARTEMIS_BROKERS (keys "old" and "new" by default), their passwords from
# ARTEMIS_<KEY>_PASSWORD; see the provider's documentation.

variable "old_broker" {
  description = "Key, in the provider's brokers, of the broker to retire."
  type        = string
  default     = "old"
}

variable "new_broker" {
  description = "Key, in the provider's brokers, of the broker that takes its queues over."
  type        = string
  default     = "new"
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
  addresses = { for name, q in data.artemis_queue.old : q.address => q... }
}

resource "artemis_address" "new" {
  for_each      = local.addresses
  broker        = var.new_broker
  name          = each.key
  routing_types = distinct([for q in each.value : q.routing_type])
}

# The settings the old broker applied to each address (every matching entry merged, its
# defaults filled in), so that the new broker keeps every message the old one would have kept.
resource "artemis_address_settings" "new" {
  for_each                = local.addresses
  broker                  = var.new_broker
  match                   = each.key
  address_full_policy     = each.value[0].address_settings.address_full_policy
  max_size_bytes          = each.value[0].address_settings.max_size_bytes
  page_size_bytes         = each.value[0].address_settings.page_size_bytes
  dead_letter_address     = each.value[0].address_settings.dead_letter_address
  expiry_address          = each.value[0].address_settings.expiry_address
  expiry_delay_ms         = each.value[0].address_settings.expiry_delay_ms
  max_delivery_attempts   = each.value[0].address_settings.max_delivery_attempts
  redelivery_delay_ms     = each.value[0].address_settings.redelivery_delay_ms
  redistribution_delay_ms = each.value[0].address_settings.redistribution_delay_ms
  # Artemis 2.32 or later on the new broker; leave it out for an older one.
  duplicate_id_cache_size = each.value[0].address_settings.duplicate_id_cache_size
}

# Each queue keeps its routing type: a MULTICAST address's subscription queues are declared as
# subscriptions of the same address, and each is moved into its own namesake, not to the address.
resource "artemis_queue" "new" {
  for_each     = data.artemis_queue.old
  broker       = var.new_broker
  name         = each.key
  address      = artemis_address.new[each.value.address].name
  routing_type = each.value.routing_type
  durable      = each.value.durable
  # A transfer refuses a target queue with a filter: a message the filter does not match would
  # reach no queue and be dropped. The new queues start without one; once the move is done,
  # set filter = each.value.filter and apply again (it changes in place).
  filter                = null
  max_consumers         = each.value.max_consumers
  exclusive             = each.value.exclusive
  last_value            = each.value.last_value || each.value.last_value_key != ""
  last_value_key        = each.value.last_value_key
  purge_on_no_consumers = each.value.purge_on_no_consumers
  ring_size             = each.value.ring_size
}

# Each move runs once its target queue and its address's settings exist; the plan knows the
# targets are created by this apply, and apply checks each against the refusal rules before
# anything of it moves. Follow the progress with TF_LOG_PROVIDER=INFO.
resource "artemis_queue_transfer" "move" {
  for_each = data.artemis_queue.old
  source   = { broker = var.old_broker, queue = each.key }
  target   = { broker = var.new_broker, queue = artemis_queue.new[each.key].name }

  depends_on = [artemis_address_settings.new]
}

output "summary" {
  description = "What the migration moved: queues, messages, and each queue's count."
  value = {
    queues   = length(artemis_queue_transfer.move)
    messages = sum(concat([0], [for t in artemis_queue_transfer.move : t.messages_relayed]))
    by_queue = { for name, t in artemis_queue_transfer.move : name => t.messages_relayed }
  }
}
