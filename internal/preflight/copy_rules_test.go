package preflight

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// copySummaries are the summaries of a copy's own findings, in the order copyFindings gives them.
var copySummaries = []string{summaryCopyUnfinished, summaryCopyIdentity, summaryCopySourceConsumers, summaryCopyScheduled}

func isCopySummary(summary string) bool {
	for _, s := range copySummaries {
		if s == summary {
			return true
		}
	}
	return false
}

func TestCopyFindings_SayWhatACopyLeavesOutAndHowItIdentifiesMessages(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Facts) // of the typical facts; nil leaves them
		facts CopyFacts
		want  []string // the copy's summaries, in order
		words []string // in their details
	}{
		{"nothing to say", nil, CopyFacts{Scheduled: -1}, nil, nil},
		{"identity sample", nil, CopyFacts{Sampled: 1000, WithoutMessageID: 12, Indistinguishable: 3, Scheduled: -1},
			[]string{summaryCopyIdentity}, []string{"first 1000 selected", "12 carry no message-id", "3 are identical"}},
		{"could not browse", nil, CopyFacts{Sampled: -1, Scheduled: -1}, []string{summaryCopyIdentity}, []string{"could not browse"}},
		{"consumers and scheduled", nil, CopyFacts{Consumers: 2, Delivering: 7, Scheduled: 4},
			[]string{summaryCopySourceConsumers, summaryCopyScheduled}, []string{"2 consumer(s) (7 message(s) in delivery", "4 scheduled"}},
		{"unfinished copy", nil, CopyFacts{Scheduled: -1, Unfinished: &UnfinishedCopy{RunID: "r1", Copied: 40, Status: "interrupted", T0: time.UnixMilli(0)}},
			[]string{summaryCopyUnfinished}, []string{"r1", "40 messages copied"}},
		{"consumers and scheduled on the source queue, in a copy's words only", func(f *Facts) {
			f.SourceQueue.ConsumerCount, f.SourceQueue.DeliveringCount, f.ScheduledMessages = 2, 7, 4
		}, CopyFacts{Consumers: 2, Delivering: 7, Scheduled: 4},
			[]string{summaryCopySourceConsumers, summaryCopyScheduled}, []string{"2 consumer(s) (7 message(s) in delivery", "4 scheduled"}},
	}
	for _, tt := range tests {
		f := typical()
		if tt.edit != nil {
			tt.edit(&f)
		}
		var summaries []string
		var details string
		for _, finding := range CheckCopy(f, tt.facts) {
			if finding.Summary == summarySourceConsumers || finding.Summary == summaryScheduledIncluded {
				t.Errorf("%s: a copy says %q in a move's words", tt.name, finding.Summary)
			}
			if !isCopySummary(finding.Summary) {
				continue
			}
			if finding.Severity != Warning {
				t.Errorf("%s: %q is not a warning", tt.name, finding.Summary)
			}
			summaries = append(summaries, finding.Summary)
			details += finding.Detail
		}
		if strings.Join(summaries, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: findings %q, want %q", tt.name, summaries, tt.want)
		}
		for _, w := range tt.words {
			if !strings.Contains(details, w) {
				t.Errorf("%s: the details do not say %q: %s", tt.name, w, details)
			}
		}
	}
}

func TestCheckCopy_ListsCheckWithoutTheMovesWordingThenTheCopysWarningsThenNotes(t *testing.T) {
	f := broken() // consumers and scheduled messages on the source, with errors and warnings
	c := CopyFacts{Sampled: 10, WithoutMessageID: 1, Consumers: 1, Scheduled: 1,
		Unfinished: &UnfinishedCopy{RunID: "r1", Status: "interrupted", T0: time.UnixMilli(0)}}
	var want, notes []string
	for _, finding := range Check(f) {
		switch {
		case finding.Summary == summarySourceConsumers || finding.Summary == summaryScheduledIncluded:
		case finding.Severity == Note:
			notes = append(notes, finding.Summary)
		default:
			want = append(want, finding.Summary)
		}
	}
	if len(want)+len(notes) != len(Check(f))-2 {
		t.Fatalf("the move's checks do not warn of the source's consumers and scheduled messages: %q", want)
	}
	want = append(want, copySummaries...) // all warnings, after Check's own errors and warnings
	want = append(want, notes...)         // the notes last
	var got []string
	for _, finding := range CheckCopy(f, c) {
		got = append(got, finding.Summary)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order\n got %q\nwant %q", got, want)
	}
}
