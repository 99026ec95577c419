// Package artemis is the client for Apache ActiveMQ Artemis brokers: management over Jolokia
// (broker and queue facts, addresses, queues and address settings, broker-side moves and
// counts) and messaging over AMQP 1.0 (receivers with manual settlement, browsers, senders with
// pipelined confirmations).
//
// It is the bottom of the provider: it imports no other package of this module and knows
// nothing of Terraform, transfers or the ledger. Higher packages compose it.
//
// # Clients and connections
//
// New builds a Client from a Config without dialing, and refuses one with problems: Config.Problems
// says what is wrong with a configuration before any broker is reached. Management calls go through the Client, one
// Jolokia request each. Messaging starts with Client.Connect (any of the configured AMQP URLs)
// or Client.ConnectTo (the URL that reaches one broker node): a Connection is one AMQP
// connection that opens Senders, Receivers and Browsers. Addresses of
// messaging links are fully qualified queue names, built with FQQN, so that a link reaches one
// queue rather than every queue of an address.
//
// Every call that can block takes a context.Context and returns when it is done.
//
// # Errors
//
// The broker's answers, go-amqp's untyped errors and TLS failures become this package's typed
// errors and sentinels at this edge; callers match them with errors.Is and errors.As, never by
// message text. Errors and URLs this package returns never show a password.
//
// # Settlement and flow
//
// A Receiver never settles on its own: the caller accepts, releases or modifies each message, so
// a message leaves its queue only when the caller says so. Its credit is bounded by count and by
// bytes. A Sender pipelines its sends, and each send's outcome is awaited separately, so that
// a batch is confirmed without a round trip per message.
package artemis
