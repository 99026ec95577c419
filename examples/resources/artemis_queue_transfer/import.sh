# Adopt an unfinished run by "<source broker>/<run id>", for example one whose apply was
# interrupted and whose configuration is gone. The run id is the suffix of its staging queue
# studio.transfer.<run id> on the source broker (a copy's is in artemis_transfer_runs: a copy is
# imported from the ledger). Apply then finishes it; destroy returns a move and abandons a copy.
terraform import artemis_queue_transfer.orders dc1/3f2a9c01b7de-mq6hez28
