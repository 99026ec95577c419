package provider

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// What an operator sees of a run: its progress lines at INFO (TF_LOG_PROVIDER=INFO), and the
// summary line at the end of a completed apply, whose counts are also in state.

// progressSubsystem names the logger of the progress lines. A subsystem logger leaves out the
// fields of each gRPC call that the provider's root logger adds (request id, RPC, provider
// address, source location): those made each line some 700 characters.
const progressSubsystem = "progress"

// progressEvery is the cadence of the progress lines; progressSettle is how long a wait must
// last before it gets a line of its own (shorter ones are summed into the next regular line).
const (
	progressEvery  = 10 * time.Second
	progressSettle = 2 * time.Second
)

// progressLogger logs a run's progress as short INFO lines, in a fixed order, at a steady
// cadence (see progressCadence).
func progressLogger(ctx context.Context, m *queueTransferModel) func(transfer.Progress) {
	ctx = tflog.NewSubsystem(ctx, progressSubsystem)
	var mu sync.Mutex
	c := &progressCadence{every: progressEvery, settle: progressSettle}
	route := ""
	if m != nil && m.Source != nil && m.Target != nil {
		route = m.Source.Broker.ValueString() + "/" + m.Source.Queue.ValueString() + " -> " +
			m.Target.Broker.ValueString() + "/" + m.Target.Queue.ValueString()
	}
	return func(p transfer.Progress) {
		mu.Lock()
		defer mu.Unlock()
		line, ok := c.next(p, time.Now())
		if !ok {
			return
		}
		if c.lines == 1 && route != "" {
			line += " | " + clip(route, 100) // the first line says which transfer the run id is
		}
		tflog.SubsystemInfo(ctx, progressSubsystem, line)
	}
}

// progressCadence decides which of a run's progress reports become a line: the first, each
// phase change, a new passing event, and otherwise one every every. Between those, a wait gets
// a line of its own once it has lasted settle (at most one such line per every), and its end
// one when it lasted every or more; shorter waits are summed up in the next line. A run
// flipping between waiting and not many times a second, or waiting a few seconds at a time
// (a BLOCK target drained by a slow consumer), so gets a line or two per every.
type progressCadence struct {
	every, settle time.Duration

	lines         int
	last          time.Time
	lastPhase     transfer.Phase
	waitLogged    bool      // the current wait has had a line
	waitSince     time.Time // when the current wait, logged, began
	lastWaitStart time.Time // when a wait last got a line of its own
	lastNote      string
	lastWaited    time.Duration
}

// next returns the line of report p at now, and whether it is due.
func (c *progressCadence) next(p transfer.Progress, now time.Time) (string, bool) {
	waiting := p.Waiting != "" && p.WaitingFor >= c.settle
	waitStarted := waiting && !c.waitLogged && now.Sub(c.lastWaitStart) >= c.every
	waitEnded := p.Waiting == "" && c.waitLogged && now.Sub(c.waitSince) >= c.every
	newNote := p.Note != "" && p.Note != c.lastNote
	if c.lines > 0 && p.Phase == c.lastPhase && !waitStarted && !waitEnded && !newNote && now.Sub(c.last) < c.every {
		if p.Waiting == "" {
			c.waitLogged = false // a short end: the next line sums the wait up
		}
		return "", false
	}
	line := progressLine(p, p.Waited-c.lastWaited, now.Sub(c.last), c.lines > 0, c.settle)
	if newNote {
		line += " | " + clip(p.Note, 240) // rare, and after a failover the whole of it matters
		c.lastNote = p.Note
	}
	if waitStarted {
		c.lastWaitStart = now
	}
	c.lines++
	c.last, c.lastPhase, c.lastWaited = now, p.Phase, p.Waited
	c.waitLogged = waiting
	if waiting {
		c.waitSince = now.Add(-p.WaitingFor)
	}
	return line, true
}

// progressLine renders a report in a fixed order: run, phase, moved/selected, percent, rate,
// ETA over the whole selection, then why the run waits once a wait has lasted settle, or else
// how long it waited in the interval since the last line. A selection known only as an
// estimate reads ~N, a lower bound >=N.
func progressLine(p transfer.Progress, waited, interval time.Duration, hasInterval bool, settle time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s %s: %d/", p.RunID, p.Phase, p.Moved)
	switch p.SelectedKind {
	case transfer.CountEstimate:
		b.WriteString("~")
	case transfer.CountAtLeast:
		b.WriteString(">=")
	}
	b.WriteString(strconv.FormatInt(p.Selected, 10))
	b.WriteString(" moved")
	if p.SelectedKind != transfer.CountAtLeast && p.Selected > 0 {
		fmt.Fprintf(&b, " (%d%%)", int(math.Floor(100*float64(p.Moved)/float64(p.Selected))))
	}
	eta := p.ETA
	if p.Waiting != "" && p.WaitingFor >= settle {
		eta = -1 // a run that is held up has no ETA worth the name; the line says why it waits
	}
	fmt.Fprintf(&b, ", %.0f msg/s, ETA %s", p.Rate, formatETA(eta))
	if p.Phase == transfer.PhaseReturning {
		fmt.Fprintf(&b, ", %d returned", p.Returned)
	}
	switch {
	case p.Waiting != "" && p.WaitingFor >= settle:
		fmt.Fprintf(&b, " | waiting %s: %s", shortDuration(p.WaitingFor), clip(strings.TrimPrefix(p.Waiting, "waiting: "), 90))
	case waited >= 500*time.Millisecond && hasInterval:
		fmt.Fprintf(&b, " | waited %s of the last %s: %s", shortDuration(waited), shortDuration(interval),
			clip(strings.TrimPrefix(p.LastWaiting, "waiting: "), 90))
	}
	return b.String()
}

// formatETA renders an ETA as 45s, 12m05s or 3h20m; "?" when it cannot be told.
func formatETA(d time.Duration) string {
	if d < 0 {
		return "?"
	}
	return shortDuration(d)
}

func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

// logSummary logs the summary of a completed run at INFO. It is no diagnostic: a completed
// transfer asks nothing of the operator, and warnings are kept for what does. The counts stay
// in state (status, messages_relayed, messages_resent, finished_at, duration_seconds), where
// terraform state show, outputs and other resources read them.
func logSummary(ctx context.Context, spec transfer.Spec, res transfer.Result) {
	summary, detail := completionSummary(spec, res)
	tflog.SubsystemInfo(tflog.NewSubsystem(ctx, progressSubsystem), progressSubsystem, summary+". "+detail)
}

// completionSummary words the summary of a completed run.
func completionSummary(spec transfer.Spec, res transfer.Result) (summary, detail string) {
	verb := "moved"
	if spec.Mode == transfer.ModeCopy {
		verb = "copied"
	}
	secs := res.Duration.Seconds()
	rate := ""
	if secs > 0 {
		rate = fmt.Sprintf(" (%.0f msg/s)", float64(res.Relayed)/secs)
	}
	summary = fmt.Sprintf("Transfer completed: %d messages %s from %s to %s in %.1f s%s, %d resent",
		res.RelayedTotal, verb, spec.Source, spec.Target, secs, rate, res.Resent)
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s completed.", res.RunID)
	if earlier := res.RelayedTotal - res.Relayed; earlier > 0 {
		fmt.Fprintf(&b, " This apply %s %d of the messages; earlier applies of the same run %s %d.", verb, res.Relayed, verb, earlier)
	}
	if res.Resent > 0 {
		fmt.Fprintf(&b, " %d copies were sent again because the source broker lost their acknowledgement; the target's duplicate detection dropped them, so none is doubled.", res.Resent)
	}
	if res.ExpiryLost > 0 {
		fmt.Fprintf(&b, " %d messages arrived without their expiry (see the warning about them).", res.ExpiryLost)
	}
	if spec.Mode != transfer.ModeCopy {
		fmt.Fprintf(&b, " Its staging queue %s is removed.", transfer.StagingQueue(res.RunID))
	}
	b.WriteString(" The counts are in state: messages_relayed, messages_resent, duration_seconds, finished_at.")
	return summary, b.String()
}

// durationSeconds is how long the completing apply worked on the run, to a tenth of a second.
func durationSeconds(res transfer.Result) float64 {
	return math.Round(res.Duration.Seconds()*10) / 10
}
