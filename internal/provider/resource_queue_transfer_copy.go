package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// copyNeedsLedgerSummary names the provider attribute a copy needs, since a resource's
// diagnostic cannot point into the provider block.
const copyNeedsLedgerSummary = "Copy needs the transfer ledger (ledger_dsn)"

// addCopyLedgerError refuses a copy when the provider has no ledger_dsn, at plan and again at
// apply: the ledger is a copy's only record of what it copied, so without one a resumed copy
// could not tell what the target already holds. It reports false when it refused.
func (r *queueTransferResource) addCopyLedgerError(spec transfer.Spec, diags *diag.Diagnostics) bool {
	if spec.Mode != transfer.ModeCopy || r.runtime == nil || r.runtime.LedgerDSN() != "" {
		return true
	}
	diags.AddAttributeError(path.Root("mode"), copyNeedsLedgerSummary,
		fmt.Sprintf("mode = %q records every message it copies in the PostgreSQL transfer ledger, so that a copy resumed after an "+
			"interruption neither skips nor doubles a message; the source queue itself keeps no trace of a copy. Set ledger_dsn "+
			"in the provider block (or ARTEMIS_LEDGER_DSN), see the ledger guide, or use mode = %q. Nothing was copied.",
			transfer.ModeCopy, transfer.ModeMove))
	return false
}

// addCopyWarnings tells the operator what a copy could not tell apart: messages identical in
// properties, application properties and body, of which the target got one each.
func addCopyWarnings(res transfer.Result, spec transfer.Spec, diags *diag.Diagnostics) {
	if spec.Mode != transfer.ModeCopy || res.CopyIndistinguishable == 0 {
		return
	}
	diags.AddWarning("Identical messages were copied once",
		fmt.Sprintf("Run %s met %d message(s) on %q identical to another one in message id, properties, application "+
			"properties and body. No reader can tell such messages apart, so the target got one of each. Producers that "+
			"set a unique message id (every JMS client does) never meet this.", res.RunID, res.CopyIndistinguishable, spec.Source.Queue))
}
