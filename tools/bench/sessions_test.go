package bench

import (
	"strings"
	"testing"
)

func sessionsForReport() *SessionsResults {
	res := &SessionsResults{Machine: Machine{Commit: "abc", Date: "2026-12-07 17:00 UTC", Cores: 2}, Complete: true, Requests: 1000, Reps: 3, Seconds: 60}
	cpu := map[string][]float64{ // broker CPU seconds per 1,000 reads, by broker, user, mode, round
		"source transfer session": {0.5, 0.6, 0.7}, "source transfer basic": {0.8, 0.9, 1.0},
		"source admin session": {0.5, 0.5, 0.5}, "source admin basic": {2.0, 1.8, 2.2},
		"legacy transfer session": {0.9, 0.9, 0.9}, "legacy transfer basic": {0.9, 0.9, 0.9},
		"legacy admin session": {1.0, 1.0, 1.0}, "legacy admin basic": {3.0, 3.0, 3.0},
	}
	for _, br := range []struct{ name, version string }{{"source", "2.40.0"}, {"legacy", "2.18.0"}} {
		for round := 1; round <= 3; round++ {
			for _, u := range []struct{ user, stored string }{{"transfer", "plain"}, {"admin", "hashed"}} {
				for _, mode := range []string{SessionReused, SessionBasic} {
					run := SessionsRun{Round: round, Broker: br.name, Version: br.version, User: u.user, Password: u.stored, Mode: mode,
						Requests: 1000, WallSeconds: 1, BrokerCPU: cpu[br.name+" "+u.user+" "+mode][round-1], LoggedIn: mode == SessionReused && br.name == "source"}
					res.Runs = append(res.Runs, run)
				}
			}
		}
	}
	return res
}

func TestSummarizeSessions_MediansByBrokerUserAndMode(t *testing.T) {
	sums := SummarizeSessions(sessionsForReport().Runs)
	if len(sums) != 8 {
		t.Fatalf("%d summaries, want 8", len(sums))
	}
	s := sums[3] // source, admin, basic
	if s.Broker != "source" || s.User != "admin" || s.Mode != SessionBasic || s.OK != 3 || !near(s.Micros, 2000) {
		t.Errorf("summary %+v, want source admin basic at a median of 2000 µs", s)
	}
}

func TestWriteSessions_SessionAgainstBasicPerBrokerAndUser(t *testing.T) {
	res := sessionsForReport()
	res.Runs[5].Error, res.Runs[5].Requests = "reading the version of broker source as admin: HTTP 401", 0
	var b strings.Builder
	writeSessions(&b, res, "bench/results-sessions.json")
	reportHas(t, b.String(),
		"## Management sessions",
		"What 1,000 Jolokia reads",
		"| source (2.40.0) | transfer (plain) | 600 | 900 | 1.50x | yes |",
		"| source (2.40.0) | admin (hashed) | 500 | 2000 | 4.00x | yes |",
		"| legacy (2.18.0) | admin (hashed) | 1000 | 3000 | 3.00x | no (Basic alone) |",
		"Failed: round 2, source, transfer, basic: reading the version",
	)
}
