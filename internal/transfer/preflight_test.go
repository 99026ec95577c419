package transfer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
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

// Two transfers that relay into one target queue at once share its duplicate-id cache (the
// target keeps one per address string a sender names): a plan counts the runs whose relay links
// the target lists on that queue, and refuses when the cache cannot hold the batches in flight of
// all of them. A producer of the plain address fills another cache and is not counted.
func TestPreflight_CountsTheRunsRelayingToTheTargetQueueNow(t *testing.T) {
	ctx := transfertest.Ctx(t, 2*time.Minute)
	env := testenv.Require(t)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "shared.cache")
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)
	if err := tgtAdmin.AddAddressSettings(ctx, tgt, map[string]any{"idCacheSize": 3000}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tgtAdmin.RemoveAddressSettings(context.Background(), tgt) })
	e := &Engine{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}
	shared := func() []preflight.Finding {
		t.Helper()
		findings, err := e.Preflight(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		var out []preflight.Finding
		for _, f := range findings {
			if f.Attribute == "batch_size" {
				out = append(out, f)
			}
		}
		return out
	}
	if got := shared(); len(got) != 0 {
		t.Fatalf("with nothing else sending, a cache of 3000 and batch_size 500: %+v", got)
	}
	conn, err := tgtAdmin.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	plain, err := conn.NewSender(ctx, tgt, artemis.SenderOptions{Name: core.RelayLinkName(core.ModeMove, "plain-address-run", 500)})
	if err != nil {
		t.Fatal(err)
	}
	if got := shared(); len(got) != 0 {
		t.Fatalf("with a relay to the plain address only: %+v", got)
	}
	_ = plain.Close(ctx)
	other, err := conn.NewSender(ctx, artemis.FQQN(tgt, tgt), artemis.SenderOptions{Name: core.RelayLinkName(core.ModeCopy, "other-run", 500)})
	if err != nil {
		t.Fatal(err)
	}
	got := shared()
	if len(got) != 1 || got[0].Severity != preflight.Error || !strings.Contains(got[0].Detail, "run other-run send to it now") ||
		!strings.Contains(got[0].Detail, "at least 4000") {
		t.Fatalf("with run other-run relaying to the queue: %+v", got)
	}
	_ = other.Close(ctx)
	if got := shared(); len(got) != 0 {
		t.Fatalf("once the other run's relay is gone: %+v", got)
	}
}
