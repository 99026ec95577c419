# Adopt an unfinished run by "<source broker>/<run id>", for example one whose apply was
# interrupted and whose configuration is gone. The run id is the suffix of its staging queue
# studio.transfer.<run id> on the source broker. Apply then finishes it; destroy returns it.
terraform import artemis_queue_transfer.orders dc1/3f2a9c01b7de-mq6hez28
