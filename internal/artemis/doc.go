// Package artemis is the client for one Apache ActiveMQ Artemis broker: management over Jolokia
// (queue facts, address settings, broker-side moves) and messaging over AMQP 1.0 (receivers with
// manual settlement, browsers, senders with pipelined confirmations).
//
// It knows nothing of Terraform or of transfers; higher packages compose it.
package artemis
