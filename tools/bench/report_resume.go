package bench

import (
	"fmt"
	"strings"
)

// writeResume shows the killed-and-resumed runs.
func writeResume(b *strings.Builder, res *Results) {
	r := res.Resume
	if r == nil || len(r.Runs) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### Resume after a kill (%s x 1 KiB, Core fill)\n\n", groupThousands(int64(r.Count)))
	p("Each run moved a fresh queue and killed the process that relayed it (SIGKILL, nothing flushed) a quarter of the way through, then resumed the run in a new process. **Engine**: a child process running `Engine.Move` killed itself once the engine reported the count relayed; a new child ran `Engine.Resume`; first batch is from the Resume call to the first batch the target confirmed. **terraform apply**: the provider was killed once the target held the count; a second `terraform apply` in the same folder resumed the run; first batch is from that apply's start to the first message that reached the target after it (the target's count, read every %s). Process is the whole second process. Each run is checked: every message on the target once, none on the source, no staging left.\n\n", resumePoll)
	for _, via := range []string{ResumeViaApply, ResumeViaEngine} {
		if median, slowest, ok, runs := r.Stats(via); runs > 0 {
			p("- %s: median first batch %.2f s, slowest %.2f s, %d of %d runs correct\n", via, median, slowest, ok, runs)
		}
	}
	p("\n| run | via | killed at | first batch s | process s | check |\n|---:|---|---:|---:|---:|---|\n")
	for _, run := range r.Runs {
		check := "ok"
		if !run.OK {
			check = "**FAILED**: " + oneLine(run.Error)
		}
		p("| %d | %s | %s | %.2f | %.2f | %s |\n", run.Rep, run.Via, groupThousands(run.KilledAt), run.FirstRelayedSeconds, run.ProcessSeconds, check)
	}
	p("\n")
}
