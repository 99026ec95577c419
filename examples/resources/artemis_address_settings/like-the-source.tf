# The target's address keeps what the source's would have kept: the source queue's effective
# address settings (every matching entry merged, broker defaults filled in), as the
# artemis_queue data source reads them, become the entry for the target's address.
data "artemis_queue" "source" {
  broker = "dc1"
  name   = "orders"
}

locals {
  source_settings = data.artemis_queue.source.address_settings
}

resource "artemis_address_settings" "target" {
  broker              = "dc2"
  match               = data.artemis_queue.source.address
  address_full_policy = local.source_settings.address_full_policy
  max_size_bytes      = local.source_settings.max_size_bytes
  page_size_bytes     = local.source_settings.page_size_bytes
  # These four need Artemis 2.32 or later on the target; leave them out for an older one.
  max_size_messages       = local.source_settings.max_size_messages
  page_limit_bytes        = local.source_settings.page_limit_bytes
  page_limit_messages     = local.source_settings.page_limit_messages
  page_full_policy        = local.source_settings.page_full_policy == "" ? null : local.source_settings.page_full_policy
  dead_letter_address     = local.source_settings.dead_letter_address
  expiry_address          = local.source_settings.expiry_address
  expiry_delay_ms         = local.source_settings.expiry_delay_ms
  min_expiry_delay_ms     = local.source_settings.min_expiry_delay_ms
  max_expiry_delay_ms     = local.source_settings.max_expiry_delay_ms
  redelivery_delay_ms     = local.source_settings.redelivery_delay_ms
  max_delivery_attempts   = local.source_settings.max_delivery_attempts
  redistribution_delay_ms = local.source_settings.redistribution_delay_ms
  send_to_dla_on_no_route = local.source_settings.send_to_dla_on_no_route
  # Also 2.32 or later. The source's value is its own setting or its broker-wide id-cache-size.
  duplicate_id_cache_size = local.source_settings.duplicate_id_cache_size
}
