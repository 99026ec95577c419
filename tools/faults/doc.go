// Package faults is the fault harness of `make faults`: seeded iterations of a transfer run by
// the real terraform CLI over real brokers, one fault each, a recovery as an operator would do
// it (apply again, a bounded number of times), and a checker that counts every message by its
// unique producer id afterwards. Its results regenerate the docs page of fault-tolerance
// figures. Terraform workspaces and applies, process lookup, the copies' ledger database and
// fills come from tools/harness.
//
//	doc.go        this map
//	kinds.go      the fault kinds, plans drawn from a seed, the schedule of a run
//	run.go        Config and Run: set-up (clients, proxies, ledger database), iterations, clean-up
//	iteration.go  one iteration: queues, fill, workspace, apply, check, clean-up
//	recovery.go   the first apply with its fault, then the operator's re-applies
//	inject.go     each kind's fault: kills, cuts, stalls, a full target, a held lock
//	lease.go      the wait for a copy's lease, read from the ledger
//	copy.go       the copy kinds' checks: staging queues, source order, the ledger's account
//	checker.go    the tally of every message by its producer id, the drains and slow consumer feeding it
//	report.go     results files and the fault-tolerance page
package faults
