package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// A completed apply logs a summary line at INFO (counts, route, duration, rate), and is no
// warning: it asks nothing of the operator. It records the counts and its duration in state;
// its progress lines, at INFO, have the fixed form. Changing max_messages_per_second
// afterwards is an in-place update that moves nothing.
func TestAccQueueTransfer_CompletedApplyLogsItsSummaryWithoutAWarningAndRecordsItsDuration(t *testing.T) {
	f := newTransferFixture(t, 2000)
	logs := traceLogs(t)
	durationKept := statecheck.CompareValue(compare.ValuesSame())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: f.config("  max_messages_per_second = 1000"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("status"), knownvalue.StringExact("completed")),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(2000)),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_resent"), knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("max_messages_per_second"), knownvalue.Int64Exact(1000)),
					// 2,000 messages at 1,000 a second take at least two seconds less the burst.
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("duration_seconds"), knownvalue.Float64Func(func(v float64) error {
						if v < 1.8 || v > 600 {
							return fmt.Errorf("duration_seconds = %v, want the 2 s or more that 2,000 messages take at 1,000 a second", v)
						}
						return nil
					})),
					durationKept.AddStateValue("artemis_queue_transfer.t", tfjsonpath.New("duration_seconds")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(f.checkDepths(0, 2000), f.checkNoRuns()),
			},
			{
				Config: f.config("  max_messages_per_second = 2000"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("artemis_queue_transfer.t", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(2000)),
					durationKept.AddStateValue("artemis_queue_transfer.t", tfjsonpath.New("duration_seconds")),
				},
				Check: f.checkTargetHoldsExactly(f.ids),
			},
		},
	})
	all := logs()
	// terraform-plugin-go logs every diagnostic the provider returns: the summary is a log line
	// of its own, and no diagnostic carries it.
	route := fmt.Sprintf("from source/%s to target/%s", f.src, f.tgt)
	summary := regexp.MustCompile(`Transfer completed: 2000 messages moved ` + regexp.QuoteMeta(route) + ` in \d+\.\d s \(\d+ msg/s\), 0 resent`)
	if !summary.MatchString(all) {
		t.Errorf("the apply logged no summary line matching %s", summary)
	}
	if warningWith(all, summary) {
		t.Errorf("the apply returned the summary as a warning diagnostic")
	}
	// The progress lines: run, phase, moved/selected, percent, rate, ETA, in that order.
	lines := progressLines.FindAllString(all, -1)
	if len(lines) < 2 {
		t.Fatalf("want at least the staging and relaying lines at INFO, got %q", lines)
	}
	for _, l := range lines {
		if len(l) > 200 {
			t.Errorf("progress line of %d characters: %q", len(l), l)
		}
	}
	t.Logf("progress lines: %q", lines)
}

// progressLines matches the message of a progress line as Terraform logs it.
var progressLines = regexp.MustCompile(`run [0-9a-f]{12}-[0-9a-z]+ (staging|relaying|finishing): \d+/(~|>=)?\d+ moved( \(\d+%\))?, \d+ msg/s, ETA (\?|\d+[smh][0-9ms]*)[^:\n]*`)

func TestAccQueueTransfer_MaxMessagesPerSecondBelowOneIsRefusedOnTheAttribute(t *testing.T) {
	f := newTransferFixture(t, 0)
	for _, v := range []string{"0", "-5"} {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: f.config("  max_messages_per_second = " + v), PlanOnly: true,
				ExpectError: cliErrorRe([]string{"Invalid transfer (max_messages_per_second)", "max_messages_per_second = " + v,
					"is not a rate", "at least 1", "leave it out to move as fast as the brokers allow"}),
			}},
		})
	}
}

// ---------------------------------------------------------------------------------------------
// Unit tests, no broker.

func TestProgressCadence_SteadyLinesAndDebouncedWaits(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	base := transfer.Progress{RunID: "3f2a9c01b7de-m4x9k2", Phase: core.PhaseRelaying, Selected: 100_000, SelectedKind: transfer.CountEstimate,
		Rate: 400, ETA: 4 * time.Minute}
	full := "waiting: target address blk is full (BLOCK policy, 100% of its limit, broker memory 12%)"
	c := &progressCadence{every: 10 * time.Second, settle: 2 * time.Second}
	type line struct {
		at   time.Duration
		text string
	}
	var lines []line
	at := func(d time.Duration, p transfer.Progress) {
		if text, ok := c.next(p, t0.Add(d)); ok {
			lines = append(lines, line{d, text})
		}
	}
	between := func(from, to time.Duration) (out []string) {
		for _, l := range lines {
			if l.at >= from && l.at < to {
				out = append(out, l.text)
			}
		}
		return out
	}
	at(0, base)
	// The BLOCK target: for a minute it takes a batch, fills, and drains again every
	// 0.26 s, so the reports flip between waiting and not, and no wait lasts 2 s.
	var waited time.Duration
	var moved int64
	for i := 1; i <= 230; i++ {
		p := base
		if i%2 == 1 {
			p.Waiting, p.WaitingFor = full, 100*time.Millisecond
		} else {
			waited += 200 * time.Millisecond
			moved += 100
		}
		p.Moved, p.Waited, p.LastWaiting = moved, waited+p.WaitingFor, full
		at(time.Duration(i)*260*time.Millisecond, p)
	}
	// Then it stays full for 30 s, reported every second.
	for s := 61; s <= 91; s++ {
		p := base
		p.Moved, p.Waiting, p.WaitingFor, p.LastWaiting = moved, full, time.Duration(s-61)*time.Second, full
		p.Waited = waited + p.WaitingFor
		at(time.Duration(s)*time.Second, p)
	}
	ended := base
	waited += 30 * time.Second
	ended.Moved, ended.Waited, ended.LastWaiting = moved, waited, full
	at(92*time.Second, ended)
	at(92500*time.Millisecond, ended) // nothing new: no line
	// Then, for two minutes, a slow consumer drains it a little at a time: waits of 3 s with a
	// second of relaying between them, reported every half second.
	for i := 0; i < 240; i++ {
		d := 93*time.Second + time.Duration(i)*500*time.Millisecond
		p := base
		if phase := i % 8; phase < 6 {
			p.Waiting, p.WaitingFor = full, time.Duration(phase)*500*time.Millisecond
		} else {
			moved += 50
			if phase == 6 {
				waited += 3 * time.Second
			}
		}
		p.Moved, p.LastWaiting, p.Waited = moved, full, waited+p.WaitingFor
		at(d, p)
	}
	finishing := ended
	finishing.Moved = moved
	finishing.Phase = core.PhaseFinishing
	at(213*time.Second, finishing)
	for _, l := range lines {
		t.Logf("%6.2fs %s", l.at.Seconds(), l.text)
	}

	flipping := between(time.Second, 61*time.Second)
	if len(flipping) < 5 || len(flipping) > 6 {
		t.Errorf("a minute of flipping between waiting and not gave %d lines, want one per 10 s", len(flipping))
	}
	for _, l := range flipping {
		if !strings.Contains(l, "| waited ") || !strings.Contains(l, "of the last 10s: target address blk is full") {
			t.Errorf("a line of the flipping minute does not say how long of the last 10 s the run waited, and why: %q", l)
		}
	}
	long := between(61*time.Second, 92*time.Second)
	if len(long) < 3 || len(long) > 5 || !strings.Contains(strings.Join(long, "\n"), "| waiting 2s: target address blk is full") {
		t.Errorf("a wait of 30 s gave lines %q; want its start once it has lasted 2 s, then one per 10 s", long)
	}
	if end := between(92*time.Second, 93*time.Second); len(end) != 1 || !strings.Contains(end[0], "| waited ") {
		t.Errorf("the end of the wait gave %q, want one line saying how long it waited", end)
	}
	if drained := between(93*time.Second, 213*time.Second); len(drained) > 24 || len(drained) < 12 {
		t.Errorf("two minutes of 3 s waits gave %d lines, want one or two per 10 s", len(drained))
	}
	if ph := between(213*time.Second, time.Hour); len(ph) != 1 || !strings.Contains(ph[0], " finishing: ") {
		t.Errorf("the phase change gave %q, want one line", ph)
	}
	for _, l := range lines {
		if len(l.text) > 200 || !progressLines.MatchString(l.text) {
			t.Errorf("line out of form or over 200 characters: %q", l.text)
		}
	}
}

func TestProgressLine_FixedOrderAndHowTheSelectionIsKnown(t *testing.T) {
	id := "3f2a9c01b7de-m4x9k2"
	tests := []struct {
		p    transfer.Progress
		want string
	}{
		{transfer.Progress{RunID: id, Phase: core.PhaseRelaying, Moved: 4200, Selected: 10_000, SelectedKind: transfer.CountEstimate, Rate: 812.4, ETA: 7 * time.Second},
			"run 3f2a9c01b7de-m4x9k2 relaying: 4200/~10000 moved (42%), 812 msg/s, ETA 7s"},
		{transfer.Progress{RunID: id, Phase: core.PhaseRelaying, Moved: 4200, Selected: 10_000, SelectedKind: core.CountExact, Rate: 12, ETA: 8*time.Minute + 3*time.Second},
			"run 3f2a9c01b7de-m4x9k2 relaying: 4200/10000 moved (42%), 12 msg/s, ETA 8m03s"},
		{transfer.Progress{RunID: id, Phase: core.PhaseStaging, Selected: 200, SelectedKind: transfer.CountAtLeast, ETA: -1},
			"run 3f2a9c01b7de-m4x9k2 staging: 0/>=200 moved, 0 msg/s, ETA ?"},
		{transfer.Progress{RunID: id, Phase: core.PhaseRelaying, Moved: 10, Selected: 1_000_000, SelectedKind: core.CountExact, Rate: 1, ETA: 277 * time.Hour,
			Waiting:    "waiting: the transfer ledger (PostgreSQL) is unreachable; the run continues when it is back (dial tcp 127.0.0.1:5432: connect: connection refused)",
			WaitingFor: 75 * time.Second},
			"run 3f2a9c01b7de-m4x9k2 relaying: 10/1000000 moved (0%), 1 msg/s, ETA ? | waiting 1m15s: the transfer ledger (PostgreSQL) is unreachable; the run continues when it is back (dia..."},
		{transfer.Progress{RunID: id, Phase: transfer.PhaseReturning, Moved: 0, Selected: 300, SelectedKind: core.CountExact, ETA: -1, Returned: 120},
			"run 3f2a9c01b7de-m4x9k2 returning: 0/300 moved (0%), 0 msg/s, ETA ?, 120 returned"},
	}
	for _, tt := range tests {
		got := progressLine(tt.p, 0, 10*time.Second, true, 2*time.Second)
		if got != tt.want {
			t.Errorf("progressLine\n got %q\nwant %q", got, tt.want)
		}
		if len(got) > 200 {
			t.Errorf("%d characters: %q", len(got), got)
		}
	}
}

func TestCompletionSummary_CountsRouteDurationAndRate(t *testing.T) {
	spec := transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "dc1", Queue: "orders"}, Target: transfer.Endpoint{Broker: "dc2", Queue: "orders"}}
	summary, detail := completionSummary(spec, transfer.Result{RunID: "3f2a9c01b7de-m4x9k2", Relayed: 6000, RelayedTotal: 10_000, Resent: 3,
		Duration: 7500 * time.Millisecond})
	if want := "Transfer completed: 10000 messages moved from dc1/orders to dc2/orders in 7.5 s (800 msg/s), 3 resent"; summary != want {
		t.Errorf("summary\n got %q\nwant %q", summary, want)
	}
	for _, w := range []string{"This apply moved 6000 of the messages; earlier applies of the same run moved 4000.",
		"3 copies were sent again", "studio.transfer.3f2a9c01b7de-m4x9k2 is removed", "duration_seconds"} {
		if !strings.Contains(detail, w) {
			t.Errorf("detail %q does not say %q", detail, w)
		}
	}
	spec.Mode = transfer.ModeCopy
	summary, detail = completionSummary(spec, transfer.Result{RunID: "r", Relayed: 5, RelayedTotal: 5, Duration: time.Second})
	if !strings.HasPrefix(summary, "Transfer completed: 5 messages copied from") || strings.Contains(detail, "staging") {
		t.Errorf("a copy's summary: %q / %q", summary, detail)
	}
	if got := durationSeconds(transfer.Result{Duration: 12345 * time.Millisecond}); got != 12.3 {
		t.Errorf("durationSeconds = %v, want 12.3", got)
	}
}
