package move

import (
	"context"
	"os"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// TestMain runs the tests, or, in a crash child of the crash tests, one move that kills its
// process where the parent planned.
func TestMain(m *testing.M) {
	if transfertest.IsCrashChild() {
		os.Exit(transfertest.RunCrashChild(func(ctx context.Context, s *core.Setup, spec core.Spec) error {
			_, err := (&Mover{setup: s}).Move(ctx, spec)
			return err
		}))
	}
	os.Exit(m.Run())
}
