package bench

import (
	"fmt"
	"strings"
	"time"
)

// writeSessions writes the management sessions section from a sessions run's results, stored at
// path (relative to the report).
func writeSessions(b *strings.Builder, res *SessionsResults, path string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	m := res.Machine
	p("## Management sessions\n\n")
	p("A separate run (`BENCH_PARTS=sessions make bench`), from commit `%s` on %s, %s in all; load average %s at its start, %s at its end. Raw results: [%s](%s).\n\n",
		m.Commit, m.Date, (time.Duration(res.Seconds) * time.Second).String(), m.LoadAtStart, m.LoadAtEnd, path, path)
	if !res.Complete {
		p("> **Incomplete run**: it stopped early (%s). What ran is shown.\n\n", res.Error)
	}
	p("What %s Jolokia reads (the broker's `Version`, one request each, over one kept-alive connection) cost the broker in CPU: with the console's session kept, as the provider's client does (one login at `<console>/auth/login`, then each request carries the session cookie and Basic authentication), against Basic authentication alone on every request (a JAAS login each time). The user `%s` is a plain-text password in `artemis-users.properties`; the admin's is hashed (`ENC(...)`, as `artemis create` writes it). %d rounds, every user and mode once per round, the order rotated; %d untimed reads before each. Medians over the rounds:\n\n",
		groupThousands(int64(res.Requests)), sessionsPlainUser(res.Runs), res.Reps, warmUpRequests)
	p("| broker | user (password) | session kept: µs of broker CPU per read | Basic each time: µs per read | Basic / session | session logged in |\n")
	p("|---|---|---:|---:|---:|---|\n")
	sums := SummarizeSessions(res.Runs)
	for _, s := range sums {
		if s.Mode != SessionReused {
			continue
		}
		var basic *SessionsSummary
		for i := range sums {
			if o := &sums[i]; o.Broker == s.Broker && o.User == s.User && o.Mode == SessionBasic {
				basic = o
			}
		}
		sess, bas, ratioText := "**failed**", "**failed**", "–"
		if s.OK > 0 {
			sess = fmt.Sprintf("%.0f", s.Micros)
		}
		if basic != nil && basic.OK > 0 {
			bas = fmt.Sprintf("%.0f", basic.Micros)
			if s.OK > 0 && s.Micros > 0 {
				ratioText = fmt.Sprintf("%.2fx", basic.Micros/s.Micros)
			}
		}
		logged := "no (Basic alone)"
		if s.LoggedIn {
			logged = "yes"
		}
		p("| %s (%s) | %s (%s) | %s | %s | %s | %s |\n", s.Broker, s.Version, s.User, s.Password, sess, bas, ratioText, logged)
	}
	p("\n")
	for _, r := range res.Runs {
		if r.Error != "" {
			p("Failed: round %d, %s, %s, %s: %s\n\n", r.Round, r.Broker, r.User, r.Mode, oneLine(r.Error))
		}
	}
}

func sessionsPlainUser(runs []SessionsRun) string {
	for _, r := range runs {
		if r.Password == "plain" {
			return r.User
		}
	}
	return "transfer"
}
