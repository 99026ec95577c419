package bench

import (
	"strings"
	"testing"
)

func TestCaseRuns_TheBaselineOnlyOnTheGoalCase(t *testing.T) {
	for _, tc := range []struct {
		c    Case
		id   string
		want bool
	}{
		{Case{Count: goalCase, Size: kib, Producer: ProducerCore}, ContenderApplyBase, true},
		{Case{Count: goalCase, Size: kib, Producer: ProducerCore, Only: []string{ContenderOurs}}, ContenderApplyBase, false},
		{Case{Count: 1_000_000, Size: kib}, ContenderApplyBase, false},
		{Case{Count: 20, Size: 10 * mib}, ContenderApplyBase, false},
		{Case{Count: 20, Size: 10 * mib}, ContenderApply, true},
	} {
		if got := tc.c.Runs(tc.id); got != tc.want {
			t.Errorf("%s runs %s: %v, want %v", tc.c.Name(), tc.id, got, tc.want)
		}
	}
}

func TestSyncedTargets_TheBaselinesRatioBesideTodays(t *testing.T) {
	res := syncedResults(t)
	base := Contender{ID: ContenderApplyBase, Label: "ours (terraform apply) at e3d3655", Tool: ToolTerraform}
	res.Contenders = append(res.Contenders, base)
	res.BaselineRev = "e3d3655"
	gc := &res.Cases[0]
	gc.Runs = append(gc.Runs, Trial{Contender: ContenderApplyBase, OK: true, MsgsPerSec: 2500, SourceCPU: 30, TargetCPU: 20, Process: ProcessRun{WallSeconds: 40}, Relay: &RelayTimes{}})
	finishCase(gc, res.Contenders)
	var measured string
	for _, tg := range syncedTargets(res) {
		if strings.Contains(tg.Goal, "terraform apply") {
			measured = tg.Measured
		}
	}
	want := "0.90x (4500 vs 5000 msg/s); the engine alone 1.00x (5000 msg/s); at e3d3655, in the same run, 0.50x (2500 msg/s)"
	if measured != want {
		t.Errorf("measured %q, want %q", measured, want)
	}
	md := Markdown(res, ReportOptions{ResultsPath: "r.json", ChartPath: "c.png"})
	reportHas(t, md, "ours (terraform apply) at e3d3655")
}
