// Package preflight holds the refusal rules that run at plan time, before a transfer moves
// anything: pure functions over facts already read from the brokers, table-tested. It does no
// I/O; the caller gathers Facts (CopyFacts for a copy), calls Check (CheckCopy), and turns each
// Finding into a diagnostic. A Finding of severity Error refuses the transfer (HasErrors); a
// Warning is shown and the transfer goes ahead; a Note is only logged. The zero Severity
// refuses, so a finding whose severity was forgotten stops a transfer rather than letting it
// through.
//
// Check runs every rule of one ordered list and returns errors first, then warnings, so that
// the same facts always give the same findings in the same order; each rule says what it found, on which broker and queue, and
// what the user can do about it.
//
// # What it may import
//
// Facts are built from internal/artemis's plain value types (BrokerInfo, QueueInfo,
// AddressSettings, AddressUsage and the like): they are what the brokers report, and fact types
// of our own would be a second copy to keep in step. preflight may use those types and artemis's
// pure functions, never its Client, its connections or anything else that does I/O; a fact that
// needs a broker call is read by the caller (internal/transfer) and passed in as a value. Data
// flows provider -> transfer -> (preflight, artemis): artemis never imports preflight.
package preflight
