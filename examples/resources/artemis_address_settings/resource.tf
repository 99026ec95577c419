# Orders are never dropped: a full address blocks senders, paging is bounded, and a message
# that fails 5 deliveries goes to DLQ.orders rather than away.
resource "artemis_address_settings" "orders" {
  broker                = "dc2"
  match                 = "orders.#"
  address_full_policy   = "BLOCK"
  max_size_bytes        = 104857600
  page_size_bytes       = 10485760
  dead_letter_address   = "DLQ.orders"
  expiry_address        = "ExpiryQueue"
  max_delivery_attempts = 5
  redelivery_delay_ms   = 1000
}
