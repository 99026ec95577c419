package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	// File is where ReadResults read the results from ("" for a run's own).
	File string `json:"-"`
}

// KindSummary is one row of the published table.
type KindSummary struct {
	Kind            Kind
	What            string
	Iterations      int
	Injected        int // iterations where the fault landed during the first apply
	Messages        int
	Lost, Doubled   int
	Copies          bool // the kind's iterations copy: lost and doubled count on the target
	SourceChanged   int  // a copy's source messages missing or doubled
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
func (r *Results) Summary() []KindSummary { return summary(r.Runs) }

func summary(runs []Iteration) []KindSummary {
	var out []KindSummary
	for _, k := range Kinds {
		s := KindSummary{Kind: k.Kind, What: k.What, Copies: k.Kind.Copies()}
		for _, it := range runs {
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
func (r *Results) Total() KindSummary { return total(r.Runs) }

func total(runs []Iteration) KindSummary {
	t := KindSummary{What: "all"}
	for _, it := range runs {
		t.add(it)
		t.Copies = t.Copies || it.Kind.Copies()
	}
	return t.finish()
}

func (s *KindSummary) add(it Iteration) {
	s.Iterations++
	s.Messages += it.Count
	s.Lost += it.Lost
	s.Doubled += it.Doubled
	s.SourceChanged += it.SourceChanged
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
	r.File = path
	return &r, nil
}

// ReadPublished reads every results file (*.json) in dir, the published runs.
func ReadPublished(dir string) ([]*Results, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("listing published fault results in %s: %w", dir, err)
	}
	var out []*Results
	for _, p := range paths {
		r, err := ReadResults(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Page is the published page: results of several harness runs (a long run of the move kinds,
// a later one of the copy kinds, ...). Each kind's row comes from the newest run that measured
// it, and says which run (commit, date) that was.
type Page struct {
	Runs []*Results
}

// Section is one run's part of the page: the kinds whose newest figures it holds.
type Section struct {
	*Results
	Kinds []Kind
}

// owners maps each kind to the newest run that measured it (the later of two of one date).
func (p Page) owners() map[Kind]*Results {
	own := map[Kind]*Results{}
	for _, r := range p.Runs {
		for _, it := range r.Runs {
			if o, ok := own[it.Kind]; !ok || !r.Date.Before(o.Date) {
				own[it.Kind] = r
			}
		}
	}
	return own
}

// Sections are the runs that hold a row, ordered by their first kind in Kinds order.
func (p Page) Sections() []Section {
	own := p.owners()
	var out []Section
	for _, k := range Kinds {
		r, ok := own[k.Kind]
		if !ok {
			continue
		}
		i := slices.IndexFunc(out, func(s Section) bool { return s.Results == r })
		if i < 0 {
			out = append(out, Section{Results: r})
			i = len(out) - 1
		}
		out[i].Kinds = append(out[i].Kinds, k.Kind)
	}
	return out
}

// Superseded are the runs every kind of which a newer run measured again: they hold no row.
func (p Page) Superseded() []*Results {
	own := p.owners()
	var out []*Results
	for _, r := range p.Runs {
		if !slices.ContainsFunc(r.Runs, func(it Iteration) bool { return own[it.Kind] == r }) {
			out = append(out, r)
		}
	}
	return out
}

// Faults lists every kind, with the section that measured it (nil: not measured yet).
func (p Page) Faults() []KindRow {
	own := p.owners()
	out := make([]KindRow, len(Kinds))
	for i, k := range Kinds {
		out[i] = KindRow{KindInfo: k, Measured: own[k.Kind]}
	}
	return out
}

// KindRow is a row of the page's table of faults.
type KindRow struct {
	KindInfo
	Measured *Results
}

// Notable lists the iterations of every published run that were not OK, with their run, the
// oldest run first: those of a kind a newer run measured again too, so that a failure a later
// fix answered stays on the page, with the commit that measured the kind again.
func (p Page) Notable() []NotableIteration {
	own := p.owners()
	runs := slices.Clone(p.Runs)
	slices.SortStableFunc(runs, func(a, b *Results) int { return a.Date.Compare(b.Date) })
	var out []NotableIteration
	for _, r := range runs {
		for _, it := range r.Runs {
			if it.OK {
				continue
			}
			n := NotableIteration{Iteration: it, Commit: r.Commit}
			if o := own[it.Kind]; o != nil && o != r {
				n.MeasuredAgainAt = o.Commit
			}
			out = append(out, n)
		}
	}
	return out
}

// NotableIteration is an iteration with a problem, and the commit it ran on; MeasuredAgainAt
// is the commit of the newer run whose row its kind has, when there is one.
type NotableIteration struct {
	Iteration
	Commit          string
	MeasuredAgainAt string
}

// iterations are the section's run's iterations of its kinds.
func (s Section) iterations() []Iteration {
	var out []Iteration
	for _, it := range s.Runs {
		if slices.Contains(s.Kinds, it.Kind) {
			out = append(out, it)
		}
	}
	return out
}

// Summary is the section's rows, in Kinds order.
func (s Section) Summary() []KindSummary { return summary(s.iterations()) }

// Total sums the section's rows.
func (s Section) Total() KindSummary { return total(s.iterations()) }

// Partial says the section shows only some of its run's kinds (a later run measured the others).
func (s Section) Partial() bool {
	return slices.ContainsFunc(s.Runs, func(it Iteration) bool { return !slices.Contains(s.Kinds, it.Kind) })
}

// WritePage writes the page of these results alone; Page.Write merges several runs.
func (r *Results) WritePage(path string) error { return Page{Runs: []*Results{r}}.Write(path) }

// Write writes the docs template (templates/guides/fault-tolerance.md.tmpl); `make docs`
// turns it into docs/guides/fault-tolerance.md.
func (p Page) Write(path string) error {
	var b strings.Builder
	if err := pageTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("rendering the fault-tolerance page: %w", err)
	}
	if strings.Contains(b.String(), "{{") {
		return fmt.Errorf("the fault-tolerance page would hold {{, which tfplugindocs reads as a template action")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func seconds(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f s", v)
}

// changed is a copy row's "source changed" cell; a move has no such column of its own.
func changed(s KindSummary) string {
	if !s.Copies {
		return "–"
	}
	return fmt.Sprint(s.SourceChanged)
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"seconds": seconds,
	"changed": changed,
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
provider. Once the target holds a seeded number of messages, one fault is injected (the kinds
that land anytime instead draw their instant uniformly over the whole apply, from its first
millisecond, as timed by a clean reference apply of the same size). Then the
harness recovers as an operator would: it applies again, up to a bounded number of times, each
apply bounded in time. Last, a checker consumes everything on the target (on both nodes for
the failover), what is left on the source, and every staging queue, and compares what it found
with the selection by producer id.

The copy kinds (the ones marked **copy** below) copy instead (` + "`mode = \"copy\"`" + `,
recorded in a ledger database the harness creates on the environment's PostgreSQL for its run).
Their checker holds them to a copy's promise: every selected message on the target exactly once,
and every one still on the source exactly once, in its order and with its delivery count
untouched; no queue under the staging prefix on either broker; and the ledger has the copy as
one completed run that recorded every message.

Each table below holds the figures of one harness run, with the commit and date it ran on: a
kind's row comes from the newest published run that measured it (the runs' results are in
` + "`faults/*.json`" + `).
{{range .Sections}}
## {{if .Partial}}{{range $i, $k := .Kinds}}{{if $i}}, {{end}}` + "`{{$k}}`" + `{{end}}{{else}}Profile ` + "`{{.Profile}}`" + `{{end}} at ` + "`{{.Commit}}`" + `

- **Profile** ` + "`{{.Profile}}`" + `, commit ` + "`{{.Commit}}`" + `, {{date .Date}}, run seed {{.RunSeed}};
  {{len .Runs}} of {{.Planned}} planned iterations ran, in {{minutes .Seconds}} ({{per .Seconds (len .Runs)}} per iteration){{if .Machine}}, on {{.Machine}}{{end}}.{{if .Partial}}
  This table shows the kinds of that run that no later run measured.{{end}}
- Command: ` + "`{{.Command}}`" + `
- Replay one iteration: ` + "`SEED=<seed> KIND=<kind> make faults PROFILE={{.Profile}}`" + ` (every iteration
  prints its seed and kind first; the seed and kind give the same plan at later commits).

| fault | iterations | injected | messages | lost | doubled | source changed | unexpected | left in staging | failed | applies per iteration | mean recovery | max recovery |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
{{range .Summary}}| ` + "`{{.Kind}}`" + ` | {{.Iterations}} | {{.Injected}} | {{.Messages}} | {{.Lost}} | {{.Doubled}} | {{changed .}} | {{.Unexpected}} | {{.InStaging}} | {{.Failed}} | {{ratio .Applies .Iterations}} | {{seconds .MeanRecovery}} | {{seconds .MaxRecovery}} |
{{end}}{{with .Total}}| **all** | {{.Iterations}} | {{.Injected}} | {{.Messages}} | {{.Lost}} | {{.Doubled}} | {{changed .}} | {{.Unexpected}} | {{.InStaging}} | {{.Failed}} | {{ratio .Applies .Iterations}} | {{seconds .MeanRecovery}} | {{seconds .MaxRecovery}} |{{end}}
{{end}}
## What the columns say

- **injected**: iterations where the fault landed while the first apply ran (an apply that
  finishes before the target reaches the trigger point is checked all the same).
- **lost**: a move's producer ids found nowhere; a copy's missing on the target. **doubled**: a
  move's copies beyond the first, anywhere; a copy's beyond the first on the target. **source
  changed**: a copy's producer ids not on the source exactly once (missing or doubled); a copy
  that reorders the source or raises a delivery count there fails too. **unexpected**: messages
  without one of the iteration's producer ids. **left in staging**: messages still in a run's
  staging queue after the recovery.
- **failed**: iterations with any problem, including no successful apply within the bounded
  tries. **applies per iteration**: 1.0 means every interrupted apply finished the transfer
  itself; a fault that fails the apply costs the operator one more. **recovery**: from the fault to the end of the first successful apply (the
  interrupted apply itself, when it survived the fault), over the iterations where the fault
  was injected.
- **Schedules**: a run seed gives iteration *i* the kind *i* mod the number of kinds. The copy
  kinds came after ` + "`10aaae6`" + `, last in the list, so a run seed schedules its first 12 iterations
  as it did there and its later ones differently (the long profile's 120 iterations at
  ` + "`10aaae6`" + ` are not the first 120 of today's 140); each iteration's seed and kind still replay
  it exactly.

## The faults

| fault | what the harness does |
|---|---|
{{range .Faults}}| ` + "`{{.Kind}}`" + ` | {{.What}}{{if not .Measured}} Not measured yet.{{end}} |
{{end}}{{if .Notable}}
## Iterations with a problem

| seed | fault | commit | messages | problem |
|---:|---|---|---:|---|
{{range .Notable}}| {{.Seed}} | ` + "`{{.Kind}}`" + ` | ` + "`{{.Commit}}`" + ` | {{.Count}} | {{cell .Problem}}{{with .MeasuredAgainAt}} (the kind's row is from a later run, at ` + "`{{.}}`" + `){{end}} |
{{end}}{{end}}`))
