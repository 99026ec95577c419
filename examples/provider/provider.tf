variable "dc1_password" {
  type      = string
  sensitive = true
}

variable "dc2_password" {
  type      = string
  sensitive = true
}

# One provider block names every broker; a transfer refers to them by these names.
provider "artemis" {
  brokers = {
    dc1 = {
      # broker2 is broker1's backup (shared store or replication), not another cluster node:
      # every AMQP URL must reach management_url's node or a backup sharing its journal.
      amqp_urls      = ["amqp://broker1.dc1.example.com:5672", "amqp://broker2.dc1.example.com:5672"]
      management_url = "http://broker1.dc1.example.com:8161/console/jolokia"
      username       = "transfer"
      password       = var.dc1_password
    }

    dc2 = {
      amqp_urls      = ["amqps://broker.dc2.example.com:5671"]
      management_url = "https://broker.dc2.example.com:8443/console/jolokia"
      username       = "transfer"
      password       = var.dc2_password
      tls = {
        ca_cert_file = "${path.module}/dc2-ca.pem"
      }
      request_timeout = "2m"
    }
  }

  # Optional: PostgreSQL bookkeeping of transfers. ARTEMIS_LEDGER_DSN works too.
  # ledger_dsn = var.ledger_dsn
}
