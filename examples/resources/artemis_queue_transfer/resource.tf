# Brokers are named in the provider block (see the provider example); dc1 and dc2 are two
# clusters. The target queues must already exist: a transfer never creates its target.

# Move the whole queue, as it stands when the run starts: messages produced after that stay on
# dc1. `terraform plan` reports how many messages are selected and refuses a target that would
# drop or double them; `terraform apply` moves them.
resource "artemis_queue_transfer" "orders" {
  source = { broker = "dc1", queue = "orders" }
  target = { broker = "dc2", queue = "orders" }

  # Spare the target's consumers a burst: at most 2,000 messages a second. Run the apply with
  # TF_LOG_PROVIDER=INFO to see the run's progress every 10 seconds.
  max_messages_per_second = 2000

  # A large queue can take a while; an apply stopped by this timeout loses nothing, and the
  # next apply resumes the same run. Defaults: create 24h, update 24h, delete 1h.
  timeouts = {
    create = "6h"
  }

  # A completed transfer never runs again by itself; changing a value here replaces it, and the
  # new run moves what has arrived on dc1 since the last one.
  triggers = {
    wave = "1"
  }
}

# Move only the messages that match a Core filter (JMS selector syntax) on their properties.
resource "artemis_queue_transfer" "eu_invoices" {
  source = { broker = "dc1", queue = "invoices" }
  target = { broker = "dc2", queue = "invoices.eu" }

  filter = "region = 'eu' AND amount > 1000"

  # Fewer unconfirmed messages at a time, for a target with a small duplicate-id cache: up to
  # two batches await confirmation, so it must hold at least four times batch_size ids (800).
  batch_size = 200
}

# Move exactly these messages, by JMSMessageID or AMQP message-id: here, dead-lettered orders to
# put back into processing on the other cluster. Ids not on the queue are ignored.
resource "artemis_queue_transfer" "replay" {
  source = { broker = "dc1", queue = "DLQ" }
  target = { broker = "dc2", queue = "orders" }

  message_ids = [
    "ID:5c0e7a52-4b1f-11f0-9d6e-0242ac120002",
    "ID:5c0e7a53-4b1f-11f0-9d6e-0242ac120002",
  ]
}
