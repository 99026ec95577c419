# The moves, from the old broker into the queues main.tf declares, in the same apply. On the last
# day, once every transfer has completed and the old broker is to go, this file is replaced by
# last-day/removed.tf (see the guide): nothing else of the configuration refers to the old broker.

variable "old_broker" {
  description = "Key, in the provider's brokers, of the broker to retire."
  type        = string
  default     = "old"
}

# Each move runs once its target queue and its address's settings exist; the plan knows the
# targets are created by this apply, and apply checks each against the refusal rules before
# anything of it moves. Follow the progress with TF_LOG_PROVIDER=INFO.
resource "artemis_queue_transfer" "move" {
  for_each = var.queues
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
