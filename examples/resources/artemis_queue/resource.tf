resource "artemis_address" "orders" {
  broker        = "dc2"
  name          = "orders"
  routing_types = ["ANYCAST"]
}

# A durable queue that takes only the orders of one region, at most 4 consumers at a time.
resource "artemis_queue" "orders_eu" {
  broker        = "dc2"
  name          = "orders.eu"
  address       = artemis_address.orders.name
  routing_type  = "ANYCAST"
  filter        = "region = 'eu'"
  max_consumers = 4
}

# A last-value queue: only the newest price of each sku is kept.
resource "artemis_queue" "prices" {
  broker         = "dc2"
  name           = "prices"
  address        = "prices"
  last_value     = true
  last_value_key = "sku"
}
