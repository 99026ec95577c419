package move

import "github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"

// Engine runs moves between the two brokers of its setup.
type Engine struct {
	*core.Setup
}
