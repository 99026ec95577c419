# The demo configuration run by `make demo` (scripts/demo.sh), which fills the variables from
# the test environment. To run it by hand against other brokers, set them with TF_VAR_... or -var.
#
# It reads both brokers and the queue the demo filled on the source broker, moves that queue to the
# queue of the same name on the target broker, and copies a second queue there, leaving the source
# queue as it was (a copy records what it copied in the PostgreSQL ledger of ledger_dsn).
# `terraform plan` shows each transfer's preflight: refusals (none here) and warnings such as the
# number of messages selected.

terraform {
  required_providers {
    artemis = {
      # With its host, so that OpenTofu, which reads a source without one as
      # registry.opentofu.org/..., finds the same provider as Terraform.
      source  = "registry.terraform.io/artemis-studio/artemis"
      version = "~> 0.1"
    }
  }
}

variable "source_management_url" {
  type        = string
  description = "Jolokia endpoint of the source broker."
}

variable "source_amqp_url" {
  type        = string
  description = "AMQP endpoint of the source broker."
}

variable "target_management_url" {
  type        = string
  description = "Jolokia endpoint of the target broker."
}

variable "target_amqp_url" {
  type        = string
  description = "AMQP endpoint of the target broker."
}

variable "username" {
  type        = string
  description = "User on both brokers; the test environment's transfer user holds only what a transfer needs."
  default     = "transfer"
}

variable "password" {
  type        = string
  description = "Password of username on both brokers."
  sensitive   = true
}

variable "queue" {
  type        = string
  description = "Queue on the source broker that the demo filled and moves."
  default     = "demo.orders"
}

variable "copy_queue" {
  type        = string
  description = "Queue on the source broker that the demo filled and copies."
  default     = "demo.invoices"
}

variable "ledger_dsn" {
  type        = string
  description = "PostgreSQL connection string of the transfer ledger, which a copy needs."
  sensitive   = true
}

provider "artemis" {
  ledger_dsn = var.ledger_dsn
  brokers = {
    source = {
      amqp_urls      = [var.source_amqp_url]
      management_url = var.source_management_url
      username       = var.username
      password       = var.password
    }
    target = {
      amqp_urls      = [var.target_amqp_url]
      management_url = var.target_management_url
      username       = var.username
      password       = var.password
    }
  }
}

data "artemis_broker" "source" {
  broker = "source"
}

data "artemis_broker" "target" {
  broker = "target"
}

data "artemis_queue" "orders" {
  broker = "source"
  name   = var.queue
}

# Moves every message on the source queue, as of the run's start, to the target queue.
resource "artemis_queue_transfer" "orders" {
  source = { broker = "source", queue = data.artemis_queue.orders.name }
  target = { broker = "target", queue = var.queue }
}

# Copies every message on the second queue, as of the run's start, to the target; the source
# queue keeps its messages, in their order, with their delivery counts.
resource "artemis_queue_transfer" "invoices" {
  mode   = "copy"
  source = { broker = "source", queue = var.copy_queue }
  target = { broker = "target", queue = var.copy_queue }
}

output "messages_copied" {
  value = artemis_queue_transfer.invoices.messages_relayed
}

output "messages_moved" {
  value = artemis_queue_transfer.orders.messages_relayed
}

output "run_id" {
  value = artemis_queue_transfer.orders.run_id
}

output "source_version" {
  value = data.artemis_broker.source.version
}

output "source_queue_depth" {
  description = "Messages on the queue now; the demo put 10,000 there."
  value       = data.artemis_queue.orders.message_count
}

output "source_queue_fqqn" {
  value = data.artemis_queue.orders.fqqn
}

output "source_queue_routing_type" {
  value = data.artemis_queue.orders.routing_type
}

output "source_queue_address_settings" {
  description = "Effective address settings of the queue's address: what the broker does when it fills up, and its duplicate-id cache."
  value       = data.artemis_queue.orders.address_settings
}

output "target_version" {
  value = data.artemis_broker.target.version
}

output "target_duplicate_id_cache_size" {
  description = "Size of the target's duplicate-id cache, which a transfer relies on to avoid doubles."
  value       = data.artemis_broker.target.duplicate_id_cache_size
}

output "target_duplicate_id_cache_persisted" {
  value = data.artemis_broker.target.duplicate_id_cache_persisted
}
