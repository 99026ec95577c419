package copying

import "github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"

// Engine runs copies between the two brokers of its setup.
type Engine struct {
	*core.Setup
}
