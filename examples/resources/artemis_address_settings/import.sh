# Adopt the entry for a match by "<broker>/<match>". The import reads every setting the broker
# reports for the match; the next plan sets the attributes the configuration leaves out to null,
# and the apply after it rewrites the entry with only those the configuration gives.
terraform import artemis_address_settings.orders 'dc2/orders.#'
