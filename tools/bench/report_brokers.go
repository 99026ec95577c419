package bench

import (
	"fmt"
	"strings"
)

// writeBrokerColumns sets each contender's median rate and source broker CPU per message beside
// the same case's on the other brokers.
func writeBrokerColumns(b *strings.Builder, res, other *Results, otherPath string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Synced and unsynced brokers\n\n")
	name, otherName := res.Brokers, other.Brokers
	if name == "" {
		name = "unrecorded"
	}
	if otherName == "" {
		otherName = "unrecorded"
	}
	if res.Machine.Commit == other.Machine.Commit && res.Profile.Name == other.Profile.Name {
		p("The same profile on brokers created two ways, one after the other on this machine: **%s**, %s, and **%s**, %s. ",
			name, brokersText(res.Brokers), otherName, brokersText(other.Brokers))
	} else {
		p("Two runs on brokers created two ways on this machine: **%s**, %s (this page's run: profile `%s`, commit `%s`, %s), and **%s**, %s (profile `%s`, commit `%s`, %s). A case shows in both columns only where both runs measured it under the same name (count, size and fill). ",
			name, brokersText(res.Brokers), res.Profile.Name, res.Machine.Commit, res.Machine.Date,
			otherName, brokersText(other.Brokers), other.Profile.Name, other.Machine.Commit, other.Machine.Date)
	}
	p("The rest of this page is the %s run; the other's raw results are in [%s](%s).\n\n", name, otherPath, otherPath)
	p("| case | contender | msg/s, %s | msg/s, %s | source broker µs/msg, %s | source broker µs/msg, %s |\n|---|---|---:|---:|---:|---:|\n",
		name, otherName, name, otherName)
	labels := map[string]string{}
	for _, c := range append(append([]Contender(nil), res.Contenders...), other.Contenders...) {
		labels[c.ID] = c.Label
	}
	for i := range res.Cases {
		cr := &res.Cases[i]
		var oc *CaseResult
		for j := range other.Cases {
			if other.Cases[j].Name == cr.Name {
				oc = &other.Cases[j]
			}
		}
		for _, s := range cr.Summary {
			rate, cpu, orate, ocpu := "–", "–", "–", "–"
			if s.OKRuns > 0 {
				rate, cpu = num(s.MsgsPerSec), num(s.SourceCPU*1e6/float64(cr.Count))
			}
			if oc != nil {
				for _, o := range oc.Summary {
					if o.Contender == s.Contender && o.OKRuns > 0 {
						orate, ocpu = num(o.MsgsPerSec), num(o.SourceCPU*1e6/float64(oc.Count))
					}
				}
			}
			p("| %s | %s | %s | %s | %s | %s |\n", cr.Name, labels[s.Contender], rate, orate, cpu, ocpu)
		}
	}
	p("\n")
}
