package transfer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// A plan's passed preflight stands in for the check of the run right after it, but a refusal
// in between always wins: the target turned DROP after the pass, the plan refused, and the
// run must refuse too with nothing moved.
func TestPreflight_ARefusalAfterAPassIsNeverSkippedByTheRun(t *testing.T) {
	ctx := transfertest.Ctx(t, 2*time.Minute)
	env := testenv.Require(t)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "move")
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	env.Produce(t, "source", "queue://"+src, 20)
	e := &Engine{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}
	e.PassedChecks = &PassedChecks{}
	findings, err := e.Preflight(ctx, spec)
	if err != nil || preflight.HasErrors(findings) {
		t.Fatalf("the clean transfer's preflight: %v %+v", err, findings)
	}
	if err := tgtAdmin.AddAddressSettings(ctx, tgt, map[string]any{"addressFullMessagePolicy": "DROP"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tgtAdmin.RemoveAddressSettings(context.Background(), tgt) })
	if findings, err = e.Preflight(ctx, spec); err != nil || !preflight.HasErrors(findings) {
		t.Fatalf("the preflight after DROP did not refuse: %v %+v", err, findings)
	}
	var refused *RefusedError
	if _, err := e.Run(ctx, spec); !errors.As(err, &refused) {
		t.Fatalf("the run after a refused preflight was not refused: %v", err)
	}
	if d := transfertest.QueueDepth(t, ctx, srcAdmin, src); d != 20 {
		t.Errorf("the source holds %d of 20 after the refusal", d)
	}
	if d := transfertest.QueueDepth(t, ctx, tgtAdmin, tgt); d != 0 {
		t.Errorf("the target holds %d after the refusal", d)
	}
}
