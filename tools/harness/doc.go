// Package harness is what `make bench` (tools/bench) and `make faults` (tools/faults)
// share to drive a transfer from outside: a terraform workspace and its applies, the
// processes they start, a database of their own on the test PostgreSQL, and the fills of
// numbered messages they count afterwards. internal/testenv uses its databases too.
//
//	doc.go        this map
//	terraform.go  a workspace's main.tf (TransferConfig) and dev_overrides CLI configuration
//	apply.go      one `terraform apply` in its own process group: signals, output, its provider
//	process.go    child-process lookup and liveness from /proc, SIGKILL of one process
//	output.go     the tail of a command's output, for error messages
//	database.go   a PostgreSQL database of one run or test, created and dropped
//	fill.go       numbered messages put on a queue with the pipelined AMQP sender
//
// It imports internal/artemis (for fills) and nothing above it: the engine, the provider and
// testenv stay out, so that testenv can use it.
package harness
