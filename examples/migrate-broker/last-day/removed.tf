# The last day: this file replaces move.tf once every transfer has completed. Terraform forgets
# the transfers without destroying them (a completed transfer's destroy would touch no broker
# either, but a plan of 200 destroys is not what a reviewer should have to read), and nothing in
# the configuration refers to the old broker any more, so it can be stopped and its entry taken
# out of the provider's brokers.
removed {
  from = artemis_queue_transfer.move

  lifecycle {
    destroy = false
  }
}
