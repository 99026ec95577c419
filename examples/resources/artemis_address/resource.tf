# An address that takes both point-to-point (ANYCAST) and publish-subscribe (MULTICAST) queues.
resource "artemis_address" "orders" {
  broker        = "dc2"
  name          = "orders"
  routing_types = ["ANYCAST", "MULTICAST"]
}
