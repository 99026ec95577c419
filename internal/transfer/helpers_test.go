package transfer

// What several of this package's tests share.

// childLedgerEnv names the ledger a copy in a child process records in: a copy needs one, and a
// transfertest.CrashPlan carries none.
const childLedgerEnv = "TRANSFER_CHILD_LEDGER_DSN"
