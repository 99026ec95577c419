# Adopt an unfinished run by "<source broker>/<run id>" with an import block (Terraform 1.5 and
# later). The resource block it imports into should describe the same transfer as the run: the
# same brokers, queues, selection and mode. Apply then finishes the run; destroy returns a move
# and abandons a copy.
import {
  to = artemis_queue_transfer.orders
  id = "dc1/3f2a9c01b7de-mq6hez28"
}
