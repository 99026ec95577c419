package move

// The JMS views of the fidelity tests: what a Core JMS and an AMQP JMS consumer see of each
// message, and how the source's view and the target's may differ.
