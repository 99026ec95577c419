package transfer

import (
	"context"
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/copying"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/move"
)

// Each mode's engine refuses a spec of the other mode, whoever calls it without the front's Run.
func TestMove_RefusesACopySpecBeforeTouchingABroker(t *testing.T) {
	spec := transfertest.Spec()
	spec.Mode = ModeCopy
	if _, err := move.New(&core.Setup{}).Move(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "a copy runs with Copy") {
		t.Errorf("Move of a copy spec: %v", err)
	}
	spec.Mode = ModeMove
	// A ledger book without a ledger: the spec is refused before the ledger is asked anything.
	copier := copying.New(&core.Setup{Bookkeeper: NewLedgerBook(nil, ledger.Creator{})})
	if _, err := copier.Copy(context.Background(), spec); err == nil || !strings.Contains(err.Error(), `a copy runs a spec of mode "copy"`) {
		t.Errorf("Copy of a move spec: %v", err)
	}
}
