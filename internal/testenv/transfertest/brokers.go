package transfertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Ctx is a context for a test that ends after d or with the test.
func Ctx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// QueueDepth is how many messages a queue holds.
func QueueDepth(t *testing.T, ctx context.Context, c *artemis.Client, queue string) int64 {
	t.Helper()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		t.Fatal(err)
	}
	return q.MessageCount
}

// VisibleCount is how many messages of a queue a browser or consumer can see now: its count
// less its scheduled and in-delivery ones. The tests' browses and consumes stop once they have
// seen that many, so that a slow broker on a busy machine is waited for instead of being taken
// for the end of the queue; their long idle timeouts only end a walk that can never see them all.
func VisibleCount(t *testing.T, ctx context.Context, c *artemis.Client, queue string) int64 {
	t.Helper()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		t.Fatal(err)
	}
	return q.MessageCount - q.ScheduledCount - q.DeliveringCount
}

// RemoveRunsOf deletes whatever a test's runs left on the source broker.
// RemoveRunsOf removes what runs of spec left on a broker (a move's staging, manifest and
// quarantine queues and its staging address settings), whatever a test left behind.
func RemoveRunsOf(t *testing.T, admin *artemis.Client, spec core.Spec) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	queues, err := admin.ListQueues(ctx, core.StagingPrefix+spec.Key()+"-")
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	for _, q := range queues {
		_ = admin.DestroyQueue(ctx, q.Name)
		// A staging queue's address settings match its name; its manifest and quarantine queues
		// have none of their own.
		if !strings.HasSuffix(q.Name, ".manifest") && !strings.HasSuffix(q.Name, ".quarantine") {
			_ = admin.RemoveAddressSettings(ctx, q.Name)
		}
	}
}

// QueuePair creates queue name.src on broker source and name.tgt on broker target for one test
// and returns an admin client of each broker with the two names.
func QueuePair(t *testing.T, ctx context.Context, env *testenv.Env, name string) (srcAdmin, tgtAdmin *artemis.Client, src, tgt string) {
	t.Helper()
	srcAdmin, tgtAdmin = testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	src, tgt = testenv.UniqueName(name+".src"), testenv.UniqueName(name+".tgt")
	testenv.FixtureQueue(t, ctx, srcAdmin, src)
	testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
	return srcAdmin, tgtAdmin, src, tgt
}

// MoveSpec is the move from queue src on broker source to queue tgt on broker target; the
// staging queues of its runs are removed from the source when the test ends.
func MoveSpec(t *testing.T, srcAdmin *artemis.Client, src, tgt string) core.Spec {
	spec := core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt}}
	t.Cleanup(func() { RemoveRunsOf(t, srcAdmin, spec) })
	return spec
}
