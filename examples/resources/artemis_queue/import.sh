# Adopt an existing queue by "<broker>/<queue>". force_destroy starts false.
terraform import artemis_queue.orders_eu dc2/orders.eu
