# Check the target broker's version and its duplicate-id cache before a transfer.
data "artemis_broker" "target" {
  broker = "dc2"
}

output "target_version" {
  value = data.artemis_broker.target.version
}
