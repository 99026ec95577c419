// Package artemis is the client for one Apache ActiveMQ Artemis broker: management over Jolokia
// (queue facts, address settings, broker-side moves) and messaging over AMQP 1.0 (receivers with
// manual settlement, browsers, senders with pipelined confirmations).
//
// It knows nothing of Terraform or of transfers; higher packages compose it. Its files:
//
//   - errors.go: every exported error (sentinels and error types), matched with errors.Is/As
//   - classify.go: broker answers, go-amqp's untyped errors and TLS failures become those errors
//   - client.go: Client, built without dialing
//   - config.go, config_check.go: Config and TLSOptions; their checks without a broker
//   - redact.go: URLs with their passwords hidden
//   - jolokia.go: one Jolokia request (transport, login, exec, read, search) and ObjectNames
//   - management.go: the MBean names of the broker and its queues, and decoding attributes
//   - broker_info.go: what the broker says about itself (version, node, persistence, memory)
//   - queues.go: a queue's facts and depth; creating, destroying and listing queues
//   - addresses.go: an address's diverts and usage
//   - address_admin.go, queue_admin.go, settings_admin.go: declaring addresses, queues and
//     address settings: create, read, update in place, delete
//   - messages.go: broker-side moves, counts, browses and listings of a queue's messages
//   - count_matches.go: counting the messages that match a filter past the broker's page
//   - settings.go, settings_legacy.go: address-settings (and their form before Artemis 2.32)
//   - connection.go: Connection, one AMQP connection, reconnected on demand
//   - dial.go: opening an AMQP connection over TCP or TLS, and saying why one did not open
//   - node.go, peeropen.go: which broker node an AMQP URL reaches, read from the broker's Open
//   - coalesce.go: fewer socket writes for go-amqp's frames
//   - receiver.go, bytecredit.go: Receiver, with manual settlement and credit bounded by count
//     and by bytes
//   - browser.go: Browser, reading a queue without taking its messages
//   - sender.go: Sender, pipelined sends and their outcomes
package artemis
