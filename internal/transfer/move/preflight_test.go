package move

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Each case prepares a target the way an operator might have it, and the plan-time rules must
// refuse it on the right attribute, with nothing moved and no staging created.
func TestPreflight_RefusesTargetsThatWouldLoseMessages(t *testing.T) {
	testenv.Require(t)
	cases := []struct {
		name      string
		target    artemis.QueueSpec
		settings  map[string]any
		filter    string
		attribute string
		summary   string
	}{
		{name: "drop policy", target: artemis.QueueSpec{RingSize: -1, MaxConsumers: -1},
			settings: map[string]any{"addressFullMessagePolicy": "DROP"}, attribute: "target.queue", summary: "drop"},
		{name: "filtered target", target: artemis.QueueSpec{RingSize: -1, MaxConsumers: -1, Filter: "region = 'eu'"},
			attribute: "target.queue", summary: "filter"},
		{name: "ring too small", target: artemis.QueueSpec{RingSize: 5, MaxConsumers: -1}, attribute: "target.queue", summary: "ring"},
		{name: "last value", target: artemis.QueueSpec{RingSize: -1, MaxConsumers: -1, LastValue: true}, attribute: "target.queue", summary: "last-value"},
		{name: "purge on no consumers", target: artemis.QueueSpec{RingSize: -1, MaxConsumers: -1, PurgeOnNoConsumers: true},
			attribute: "target.queue", summary: "consumers"},
		{name: "duplicate cache disabled", target: artemis.QueueSpec{RingSize: -1, MaxConsumers: -1},
			settings: map[string]any{"idCacheSize": 0}, attribute: "target.queue", summary: "duplicate"},
		{name: "duplicate cache smaller than the window", target: artemis.QueueSpec{RingSize: -1, MaxConsumers: -1},
			settings: map[string]any{"idCacheSize": 100}, attribute: "batch_size", summary: "duplicate"},
		{name: "invalid filter", target: artemis.QueueSpec{RingSize: -1, MaxConsumers: -1}, filter: "color = = 'x'",
			attribute: "filter", summary: "filter"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := transfertest.Ctx(t, 2*time.Minute)
			f := newMoveFixture(t, ctx, "source", "target", 0)
			f.env.Produce(t, "source", "queue://"+f.src, 20)
			// The target of this case replaces the fixture's plain one.
			if err := f.tgtAdmin.DestroyQueue(ctx, f.tgt); err != nil {
				t.Fatal(err)
			}
			tc.target.Name, tc.target.Durable = f.tgt, true
			fixtureQueueSpec(t, ctx, f.tgtAdmin, tc.target)
			if tc.settings != nil {
				if err := f.tgtAdmin.AddAddressSettings(ctx, f.tgt, tc.settings); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = f.tgtAdmin.RemoveAddressSettings(ctx, f.tgt) })
			}
			f.spec.Selection.Filter = tc.filter
			e := f.engine(t, core.Options{})
			findings, err := e.Preflight(ctx, f.spec, true)
			if err != nil {
				t.Fatal(err)
			}
			var hit *preflight.Finding
			for i, fd := range findings {
				if fd.Severity == preflight.Error && fd.Attribute == tc.attribute &&
					strings.Contains(strings.ToLower(fd.Summary+fd.Detail), tc.summary) {
					hit = &findings[i]
				}
			}
			if hit == nil {
				t.Fatalf("no error on %s about %q; findings: %+v", tc.attribute, tc.summary, findings)
			}
			// Move refuses the same way, and nothing moves.
			if _, err := e.Move(ctx, f.spec); err == nil {
				t.Fatal("Move ran a refused transfer")
			}
			if d := transfertest.QueueDepth(t, ctx, f.srcAdmin, f.src); d != 20 {
				t.Errorf("the source holds %d of 20 after a refusal", d)
			}
			if runs, _ := e.unfinishedRuns(ctx, &f.spec); len(runs) != 0 {
				t.Errorf("a refusal left runs behind: %+v", runs)
			}
		})
	}
}

func TestPreflight_RefusesATargetAcceptorWithoutDuplicateDetection(t *testing.T) {
	env := testenv.Require(t)
	b := env.Broker(t, "target")
	if b.AMQPNoDedupURL == "" {
		t.Fatal("the test environment has no acceptor without duplicate detection (restart it with scripts/testenv.sh)")
	}
	ctx := transfertest.Ctx(t, 2*time.Minute)
	f := newMoveFixture(t, ctx, "source", "target", 0)
	e := f.engine(t, core.Options{})
	noDedup, err := artemis.New(artemis.Config{Name: "target", AMQPURLs: []string{b.AMQPNoDedupURL}, ManagementURL: b.ManagementURL,
		Username: env.TransferUser, Password: env.TransferPassword})
	if err != nil {
		t.Fatal(err)
	}
	e.setup.Target = noDedup
	findings, err := e.Preflight(ctx, f.spec, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range findings {
		if fd.Severity == preflight.Error && fd.Attribute == "target.broker" && strings.Contains(fd.Detail, "holds both copies") {
			return
		}
	}
	t.Fatalf("no refusal of a target that ignores duplicate ids: %+v", findings)
}

func TestPreflight_CleanTransferWarnsOnlyWhatAReviewerShouldKnow(t *testing.T) {
	ctx := transfertest.Ctx(t, 2*time.Minute)
	f := newMoveFixture(t, ctx, "source", "target", 0)
	f.env.Produce(t, "source", "queue://"+f.src, 25)
	f.env.Produce(t, "source", "queue://"+f.src, 5, "--msgttl", "3600000")
	start := time.Now()
	findings, err := f.engine(t, core.Options{}).Preflight(ctx, f.spec, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("preflight took %s", time.Since(start).Round(time.Millisecond))
	var summaries []string
	for _, fd := range findings {
		if fd.Severity == preflight.Error {
			t.Errorf("unexpected refusal: %+v", fd)
		}
		summaries = append(summaries, fd.Summary)
	}
	all := strings.Join(summaries, " | ")
	if !strings.Contains(all, "30") {
		t.Errorf("warnings %q do not give the selection's size", all)
	}
	// The expiry is kept, and the target address has an expiry address (ExpiryQueue, from "#").
	if strings.Contains(strings.ToLower(all), "expir") {
		t.Errorf("warnings %q mention expiry", all)
	}

	// Without an expiry address on the target, the reviewer learns that expired messages go.
	if err := f.tgtAdmin.AddAddressSettings(ctx, f.tgt, map[string]any{"expiryAddress": ""}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.tgtAdmin.RemoveAddressSettings(context.Background(), f.tgt) })
	findings, err = f.engine(t, core.Options{}).Preflight(ctx, f.spec, true)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, fd := range findings {
		if fd.Summary == "Messages that expire on the target are dropped" && strings.Contains(fd.Detail, "5 selected message(s)") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning that the target drops expired messages: %+v", findings)
	}
	// The canaries leave nothing behind.
	for _, c := range []*artemis.Client{f.srcAdmin, f.tgtAdmin} {
		qs, err := c.ListQueues(ctx, core.StagingPrefix+"canary-")
		if err != nil || len(qs) != 0 {
			t.Errorf("canary queues left: %+v %v", qs, err)
		}
	}
}
