# What a transfer would meet on the target: the queue's shape and what its address does when full.
data "artemis_queue" "orders" {
  broker = "dc2"
  name   = "orders"
}

output "orders_depth" {
  value = data.artemis_queue.orders.message_count
}

output "orders_full_policy" {
  value = data.artemis_queue.orders.address_settings.address_full_policy
}
