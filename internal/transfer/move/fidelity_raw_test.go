package move

// The raw AMQP view of the fidelity tests: each message as AMQP delivers it, compared field by
// field before and after a move.
