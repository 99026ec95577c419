package transfer

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// TestMain runs this test binary as a child that runs a transfer through the front's Engine when
// a test asks for one (transfertest.RunRelayChild), else runs the tests.
func TestMain(m *testing.M) {
	if transfertest.IsCrashChild() {
		os.Exit(transfertest.RunCrashChild(runChild))
	}
	os.Exit(m.Run())
}

// runChild runs spec as Engine.Run does; a copy records in the ledger at childLedgerEnv, and ends
// its browse after 3 s without a message.
func runChild(ctx context.Context, s *core.Setup, spec core.Spec) error {
	e := (*Engine)(s)
	if spec.Mode == ModeCopy {
		l, err := ledger.Open(ctx, os.Getenv(childLedgerEnv))
		if err != nil {
			return fmt.Errorf("opening the copy's ledger: %w", err)
		}
		defer l.Close()
		e.Bookkeeper = NewLedgerBook(l, ledger.Creator{User: "test", Host: "test", Workspace: "default"})
		e.Options.CopyIdleTimeout = 3 * time.Second
	}
	_, err := e.Run(ctx, spec)
	return err
}
