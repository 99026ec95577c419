# Retire a broker, step two: declare on the new broker every queue of the old broker's inventory
# like the source (its address, its queue, its address's settings); move.tf moves each queue
# there. Step one (inventory/main.tf) wrote the inventory, inventory.auto.tfvars.json, which
# Terraform reads from this folder. Nothing in this file reads the old broker: its plan works the
# same once the old broker is stopped and its queues are deleted.
#
# The brokers come from ARTEMIS_BROKERS (keys "old" and "new" by default), their passwords from
# ARTEMIS_<KEY>_PASSWORD; see the provider's documentation.

variable "new_broker" {
  description = "Key, in the provider's brokers, of the broker that takes the queues over."
  type        = string
  default     = "new"
}

variable "queues" {
  description = "The old broker's queues by name, as step one wrote them to inventory.auto.tfvars.json."
  type = map(object({
    address               = string
    routing_type          = string
    durable               = bool
    filter                = string
    max_consumers         = number
    exclusive             = bool
    last_value            = bool
    last_value_key        = string
    purge_on_no_consumers = bool
    ring_size             = number
  }))
}

variable "addresses" {
  description = "The old broker's addresses of those queues: routing types and effective address settings, as step one wrote them."
  type = map(object({
    routing_types = list(string)
    settings = object({
      address_full_policy     = string
      max_size_bytes          = number
      max_size_messages       = number
      page_size_bytes         = number
      page_limit_bytes        = number
      page_limit_messages     = number
      page_full_policy        = string
      dead_letter_address     = string
      expiry_address          = string
      expiry_delay_ms         = number
      min_expiry_delay_ms     = number
      max_expiry_delay_ms     = number
      redelivery_delay_ms     = number
      max_delivery_attempts   = number
      redistribution_delay_ms = number
      send_to_dla_on_no_route = bool
      duplicate_id_cache_size = number
    })
  }))
}

provider "artemis" {}

# prevent_destroy on the new broker's objects: they outlive the migration, and a plan that would
# delete one (a key taken out of the inventory, a change that replaces it) fails instead.
resource "artemis_address" "new" {
  for_each      = var.addresses
  broker        = var.new_broker
  name          = each.key
  routing_types = each.value.routing_types

  lifecycle {
    prevent_destroy = true
  }
}

# The settings the old broker applied to each address, every field, so that the new broker
# keeps every message the old one would have kept.
resource "artemis_address_settings" "new" {
  for_each            = var.addresses
  broker              = var.new_broker
  match               = each.key
  address_full_policy = each.value.settings.address_full_policy
  max_size_bytes      = each.value.settings.max_size_bytes
  page_size_bytes     = each.value.settings.page_size_bytes
  # These five need Artemis 2.32 or later on the new broker; leave them out for an older one.
  max_size_messages       = each.value.settings.max_size_messages
  page_limit_bytes        = each.value.settings.page_limit_bytes
  page_limit_messages     = each.value.settings.page_limit_messages
  page_full_policy        = each.value.settings.page_full_policy == "" ? null : each.value.settings.page_full_policy
  duplicate_id_cache_size = each.value.settings.duplicate_id_cache_size
  dead_letter_address     = each.value.settings.dead_letter_address
  expiry_address          = each.value.settings.expiry_address
  expiry_delay_ms         = each.value.settings.expiry_delay_ms
  min_expiry_delay_ms     = each.value.settings.min_expiry_delay_ms
  max_expiry_delay_ms     = each.value.settings.max_expiry_delay_ms
  redelivery_delay_ms     = each.value.settings.redelivery_delay_ms
  max_delivery_attempts   = each.value.settings.max_delivery_attempts
  redistribution_delay_ms = each.value.settings.redistribution_delay_ms
  send_to_dla_on_no_route = each.value.settings.send_to_dla_on_no_route

  lifecycle {
    prevent_destroy = true
  }
}

# Each queue keeps its routing type: a MULTICAST address's subscription queues are declared as
# subscriptions of the same address, and each is moved into its own namesake, not to the address.
resource "artemis_queue" "new" {
  for_each     = var.queues
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
  last_value            = each.value.last_value
  last_value_key        = each.value.last_value_key
  purge_on_no_consumers = each.value.purge_on_no_consumers
  ring_size             = each.value.ring_size

  lifecycle {
    prevent_destroy = true
  }
}
