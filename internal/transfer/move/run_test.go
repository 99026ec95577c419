package move

import (
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

func TestMove_WholeQueueOf10000BetweenTwoBrokers(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "move.whole")
	env.Produce(t, "source", "queue://"+src, 10_000)
	want := transfertest.BrowseIDs(t, ctx, srcAdmin, src)
	if len(want) != 10_000 {
		t.Fatalf("browsed %d source messages", len(want))
	}

	var last core.Progress
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false),
		Options: core.Options{Progress: func(p core.Progress) { last = p }}}}
	start := time.Now()
	res, err := e.Move(ctx, core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("moved %d messages in %s", res.Relayed, time.Since(start))
	if res.Staged != 10_000 || res.Relayed != 10_000 || res.Resumed {
		t.Errorf("result %+v", res)
	}
	if last.Relayed != 10_000 {
		t.Errorf("last progress %+v", last)
	}
	if d := transfertest.QueueDepth(t, ctx, srcAdmin, src); d != 0 {
		t.Errorf("source still holds %d", d)
	}
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
	transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
}
