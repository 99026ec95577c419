# Move queue "orders" off every node of cluster dc1 (three nodes) into cluster dc2, with one
# resource. Each node is a broker of its own: its own queue "orders" with its own messages, its
# own journal and its own duplicate-id cache. So the provider names each node as a broker, and
# one transfer per node moves that node's messages; Terraform runs them at once.

variable "dc1_password" {
  type      = string
  sensitive = true
}

variable "dc2_password" {
  type      = string
  sensitive = true
}

locals {
  # Source node => the target node it moves into. Spreading the nodes spreads the load; a
  # transfer always writes to one target node, whose duplicate-id cache then knows its messages.
  nodes = {
    dc1-node1 = { host = "node1.dc1.example.com", target = "dc2-node1" }
    dc1-node2 = { host = "node2.dc1.example.com", target = "dc2-node2" }
    dc1-node3 = { host = "node3.dc1.example.com", target = "dc2-node1" }
  }
  targets = {
    dc2-node1 = "node1.dc2.example.com"
    dc2-node2 = "node2.dc2.example.com"
  }
}

provider "artemis" {
  # One entry per node: management_url and amqp_urls of that node only (its backup may follow
  # in amqp_urls; another node of the cluster may not).
  brokers = merge(
    { for name, n in local.nodes : name => {
      amqp_urls      = ["amqp://${n.host}:5672"]
      management_url = "http://${n.host}:8161/console/jolokia"
      username       = "transfer"
      password       = var.dc1_password
    } },
    { for name, host in local.targets : name => {
      amqp_urls      = ["amqp://${host}:5672"]
      management_url = "http://${host}:8161/console/jolokia"
      username       = "transfer"
      password       = var.dc2_password
    } },
  )
}

# What each source node holds now (refresh with terraform apply -refresh-only).
data "artemis_queue" "orders" {
  for_each = local.nodes

  broker = each.key
  name   = "orders"
}

resource "artemis_queue_transfer" "orders" {
  for_each = local.nodes

  source = { broker = each.key, queue = "orders" }
  target = { broker = each.value.target, queue = "orders" }

  # Transfers into one target address share its duplicate-id cache: two of them into dc2-node1
  # need at least 2 x 4 x batch_size ids there (4,000 with the default batch_size of 500).
  max_messages_per_second = 2000
}

output "left_on_source_nodes" {
  value = { for name, q in data.artemis_queue.orders : name => q.message_count }
}
