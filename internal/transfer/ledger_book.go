package transfer

import (
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/copying"
)

// NewLedgerBook is the engine's Bookkeeper over l, for moves and copies, creating runs as by:
// what the provider gives the engine, and what a program that runs the engine without the
// provider (make bench) gives it.
func NewLedgerBook(l *ledger.Ledger, by ledger.Creator) CopyLedger {
	return copying.NewLedgerBook(l, by)
}
