package provider

import (
	"context"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// runHooks gives the engine of each transfer run its transfer.Hooks. cancel ends the run's
// context as its timeout would, so that an acceptance test can interrupt an apply at a precise
// point of the run (after the n-th confirmation, say) instead of with a short `timeouts` value,
// which a fast machine outruns. Only tests set it; the provider Terraform runs has none.
type runHooks func(cancel context.CancelFunc) transfer.Hooks

// hooksFor returns the hooks of one run: none unless the provider was built with runHooks.
func (rt *providerRuntime) hooksFor(cancel context.CancelFunc) transfer.Hooks {
	if rt == nil || rt.runHooks == nil {
		return transfer.Hooks{}
	}
	return rt.runHooks(cancel)
}
