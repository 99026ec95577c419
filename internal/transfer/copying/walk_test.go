package copying

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

func TestCopySelectors_FreezeAtT0AndJoinIDChunksUpToTheSelectorLimit(t *testing.T) {
	t0 := time.UnixMilli(1_796_000_000_000)
	if got := copySelectors(core.Selection{}, t0); len(got) != 1 || got[0] != "AMQTimestamp <= 1796000000000" {
		t.Errorf("whole queue: %q", got)
	}
	if got := copySelectors(core.Selection{Filter: "a = 1"}, t0); len(got) != 1 || got[0] != "(a = 1) AND AMQTimestamp <= 1796000000000" {
		t.Errorf("filter: %q", got)
	}
	ids := make([]string, 2000)
	for i := range ids {
		ids[i] = "ID:" + strings.Repeat("x", 30) + string(rune('a'+i%26))
	}
	got := copySelectors(core.Selection{MessageIDs: ids}, t0)
	seen := 0
	for _, s := range got {
		if len(s) > maxSelectorLength {
			t.Errorf("a selector of %d characters, over %d", len(s), maxSelectorLength)
		}
		seen += strings.Count(s, "'ID:")
	}
	if seen != len(ids) || len(got) < 2 || len(got) >= len(core.Selection{MessageIDs: ids}.StageFilters(t0)) {
		t.Errorf("%d ids in %d selectors, want all %d in fewer selectors than the %d stage filters", seen, len(got), len(ids),
			len(core.Selection{MessageIDs: ids}.StageFilters(t0)))
	}
}

func TestCopy_ALongMessageIDListIsBrowsedInSelectorsOfUpTo16KiB(t *testing.T) {
	ctx := transfertest.Ctx(t, 10*time.Minute)
	f := newCopyFixture(t, ctx, "copyids", 60, false)
	// 3,000 ids, 40 of them on the queue, spread over the list: about 140 KiB of selector, in
	// selectors of up to 16 KiB.
	ids := make([]string, 0, 3000)
	for i := 0; len(ids) < 3000; i++ {
		if i%75 == 0 && i/75 < 40 {
			ids = append(ids, f.want[i/75])
		} else {
			ids = append(ids, fmt.Sprintf("ID:absent-%032d", i))
		}
	}
	if n := len(copySelectors(core.Selection{MessageIDs: ids}, time.Now())); n < 2 || n > 10 {
		t.Fatalf("%d selectors, want the list split into as few of up to 16 KiB as fit (9)", n)
	}
	spec := f.spec
	spec.Selection.MessageIDs = ids
	res, err := f.engine(t, core.Options{BatchSize: 20, CopyIdleTimeout: 3 * time.Second}).Copy(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	transfertest.CheckSameSet(t, f.want[:40], transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	checkCopyRun(t, ctx, f.ledger, res.RunID, 40)
}
