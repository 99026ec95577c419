package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// Results are a harness run, as results.json keeps it and the docs page shows it.
type Results struct {
	Profile  string      `json:"profile"`
	Commit   string      `json:"commit"`
	Date     time.Time   `json:"date"`
	Command  string      `json:"command"`
	RunSeed  uint64      `json:"run_seed"`
	Planned  int         `json:"planned"` // iterations scheduled; fewer ran when the deadline came first
	Seconds  float64     `json:"seconds"`
	Machine  string      `json:"machine,omitempty"`
	Runs     []Iteration `json:"iterations"`
	Problems int         `json:"problems"` // iterations that were not OK
}

// KindSummary is one row of the published table.
type KindSummary struct {
	Kind            Kind
	What            string
	Iterations      int
	Injected        int // iterations where the fault landed during the first apply
	Messages        int
	Lost, Doubled   int
	Unexpected      int
	InStaging       int
	Failed          int // iterations not OK (any reason, including no successful apply)
	Applies         int // applies run, the first ones included
	MeanRecovery    float64
	MaxRecovery     float64
	recoveries      int
	recoverySeconds float64
}

// Summary groups the iterations by kind, in Kinds order.
func (r *Results) Summary() []KindSummary {
	var out []KindSummary
	for _, k := range Kinds {
		s := KindSummary{Kind: k.Kind, What: k.What}
		for _, it := range r.Runs {
			if it.Kind == k.Kind {
				s.add(it)
			}
		}
		if s.Iterations > 0 {
			out = append(out, s.finish())
		}
	}
	return out
}

// Total sums every iteration.
func (r *Results) Total() KindSummary {
	t := KindSummary{What: "all"}
	for _, it := range r.Runs {
		t.add(it)
	}
	return t.finish()
}

func (s *KindSummary) add(it Iteration) {
	s.Iterations++
	s.Messages += it.Count
	s.Lost += it.Lost
	s.Doubled += it.Doubled
	s.Unexpected += it.Unexpected
	s.InStaging += it.InStaging
	s.Applies += it.Applies
	if it.Injected {
		s.Injected++
	}
	if !it.OK {
		s.Failed++
	}
	if it.Injected && it.Recovered {
		s.recoveries++
		s.recoverySeconds += it.RecoverySeconds
		s.MaxRecovery = max(s.MaxRecovery, it.RecoverySeconds)
	}
}

func (s KindSummary) finish() KindSummary {
	if s.recoveries > 0 {
		s.MeanRecovery = s.recoverySeconds / float64(s.recoveries)
	}
	return s
}

// WriteJSON writes the results.
func (r *Results) WriteJSON(path string) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the fault results: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}

// ReadResults reads a results file written by WriteJSON.
func ReadResults(path string) (*Results, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading fault results: %w", err)
	}
	var r Results
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("decoding fault results %s: %w", path, err)
	}
	return &r, nil
}

// WritePage writes the docs template (templates/guides/fault-tolerance.md.tmpl); `make docs`
// turns it into docs/guides/fault-tolerance.md.
func (r *Results) WritePage(path string) error {
	var b strings.Builder
	if err := pageTemplate.Execute(&b, r); err != nil {
		return fmt.Errorf("rendering the fault-tolerance page: %w", err)
	}
	if strings.Contains(b.String(), "{{") {
		return fmt.Errorf("the fault-tolerance page would hold {{, which tfplugindocs reads as a template action")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Notable lists iterations that were not OK or whose notes say something a reader should see.
func (r *Results) Notable() []Iteration {
	var out []Iteration
	for _, it := range r.Runs {
		if !it.OK {
			out = append(out, it)
		}
	}
	return out
}

func seconds(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f s", v)
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"seconds": seconds,
	"date":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"minutes": func(s float64) string { return fmt.Sprintf("%.0f min", s/60) },
	"per":     func(s float64, n int) string { return fmt.Sprintf("%.0f s", s/float64(max(n, 1))) },
	"ratio":   func(a, b int) string { return fmt.Sprintf("%.1f", float64(a)/float64(max(b, 1))) },
	"cell":    func(s string) string { return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s) },
}).Parse(`---
page_title: "Fault tolerance: figures"
subcategory: ""
description: |-
  What the fault harness (make faults) measured: seeded transfers through the terraform CLI over real brokers, one fault each, every message counted afterwards.
---

# Fault tolerance: figures

This page is written by the fault harness (` + "`make faults`" + `); do not edit it by hand.
Each iteration fills a fresh source queue with a seeded number of 1 KiB messages, each with a
unique producer id, and runs ` + "`terraform apply`" + ` of one
[` + "`artemis_queue_transfer`" + `](../resources/queue_transfer.md) through the real terraform CLI and
provider. Once the target holds a seeded number of messages, one fault is injected. Then the
harness recovers as an operator would: it applies again, up to a bounded number of times, each
apply bounded in time. Last, a checker consumes everything on the target (on both nodes for
the failover), what is left on the source, and every staging queue, and compares what it found
with the selection by producer id.

- **Profile** ` + "`{{.Profile}}`" + `, commit ` + "`{{.Commit}}`" + `, {{date .Date}}, run seed {{.RunSeed}};
  {{len .Runs}} of {{.Planned}} planned iterations ran, in {{minutes .Seconds}} ({{per .Seconds (len .Runs)}} per iteration){{if .Machine}}, on {{.Machine}}{{end}}.
- Command: ` + "`{{.Command}}`" + `
- Replay one iteration: ` + "`SEED=<seed> KIND=<kind> make faults PROFILE={{.Profile}}`" + ` (every iteration
  prints its seed and kind first).

| fault | iterations | injected | messages | lost | doubled | unexpected | left in staging | failed | applies per iteration | mean recovery | max recovery |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
{{range .Summary}}| ` + "`{{.Kind}}`" + ` | {{.Iterations}} | {{.Injected}} | {{.Messages}} | {{.Lost}} | {{.Doubled}} | {{.Unexpected}} | {{.InStaging}} | {{.Failed}} | {{ratio .Applies .Iterations}} | {{seconds .MeanRecovery}} | {{seconds .MaxRecovery}} |
{{end}}{{with .Total}}| **all** | {{.Iterations}} | {{.Injected}} | {{.Messages}} | {{.Lost}} | {{.Doubled}} | {{.Unexpected}} | {{.InStaging}} | {{.Failed}} | {{ratio .Applies .Iterations}} | {{seconds .MeanRecovery}} | {{seconds .MaxRecovery}} |{{end}}

- **injected**: iterations where the fault landed while the first apply ran (an apply that
  finishes before the target reaches the trigger point is checked all the same).
- **lost**: producer ids found nowhere. **doubled**: copies beyond the first, anywhere.
  **unexpected**: messages without one of the iteration's producer ids. **left in staging**:
  messages still in a run's staging queue after the recovery.
- **failed**: iterations with any problem, including no successful apply within the bounded
  tries. **applies per iteration**: 1.0 means every interrupted apply finished the transfer
  itself; a fault that fails the apply costs the operator one more. **recovery**: from the fault to the end of the first successful apply (the
  interrupted apply itself, when it survived the fault), over the iterations where the fault
  was injected.

## The faults

| fault | what the harness does |
|---|---|
{{range .Summary}}| ` + "`{{.Kind}}`" + ` | {{.What}} |
{{end}}| ` + "`postgres-restart`" + ` | Not run yet: PostgreSQL stopped and started during a copy-mode run, once copy mode exists. |
{{if .Notable}}
## Iterations with a problem

| seed | fault | messages | problem |
|---:|---|---:|---|
{{range .Notable}}| {{.Seed}} | ` + "`{{.Kind}}`" + ` | {{.Count}} | {{cell .Problem}} |
{{end}}{{end}}`))
