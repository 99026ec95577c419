# Adopt an existing address by "<broker>/<address>".
terraform import artemis_address.orders dc2/orders
