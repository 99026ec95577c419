package core

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Table tests of the filters that select a run's messages. None of them needs a broker.

func TestStageFilters_FreezeAFilterOrTheWholeQueueAtT0(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 5, 59, 17, 123_456_789, time.UTC)
	ms := strconv.FormatInt(t0.UnixMilli(), 10)
	tests := []struct {
		name   string
		filter string
		want   string
	}{
		{"whole queue", "", "AMQTimestamp <= " + ms},
		{"filter", "region = 'eu'", "(region = 'eu') AND AMQTimestamp <= " + ms},
		// Without the parentheses the freeze would bind to the last OR term only.
		{"filter with OR", "a = 1 OR b = 2", "(a = 1 OR b = 2) AND AMQTimestamp <= " + ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Selection{Filter: tt.filter}.StageFilters(t0)
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("StageFilters = %q, want [%q]", got, tt.want)
			}
		})
	}
}

func TestStageFilters_SelectIDsExactlyNormalisedQuotedAndNotFrozen(t *testing.T) {
	sel := Selection{MessageIDs: []string{"ID:a1", "b2", "it's"}}
	want := "AMQUserID IN ('ID:a1', 'ID:b2', 'ID:it''s')"
	for _, t0 := range []time.Time{{}, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)} {
		got := sel.StageFilters(t0)
		if len(got) != 1 || got[0] != want {
			t.Errorf("StageFilters(%v) = %q, want [%q]", t0, got, want)
		}
	}
}

func TestStageFilters_SplitIDsIntoFiltersOfAtMost200EachInOrder(t *testing.T) {
	for _, tt := range []struct{ ids, filters int }{{1, 1}, {199, 1}, {200, 1}, {201, 2}, {400, 2}, {401, 3}} {
		t.Run(fmt.Sprint(tt.ids), func(t *testing.T) {
			ids := make([]string, tt.ids)
			for i := range ids {
				ids[i] = fmt.Sprintf("ID:m%d", i)
			}
			filters := Selection{MessageIDs: ids}.StageFilters(time.Time{})
			if len(filters) != tt.filters {
				t.Fatalf("%d ids gave %d filters, want %d", tt.ids, len(filters), tt.filters)
			}
			var seen []string
			for _, f := range filters {
				inner, ok := strings.CutPrefix(f, "AMQUserID IN (")
				if !ok || !strings.HasSuffix(inner, ")") {
					t.Fatalf("filter %q is not an AMQUserID IN list", f)
				}
				quoted := strings.Split(strings.TrimSuffix(inner, ")"), ", ")
				if len(quoted) > idsPerFilter {
					t.Errorf("a filter lists %d ids, more than %d", len(quoted), idsPerFilter)
				}
				for _, q := range quoted {
					seen = append(seen, strings.Trim(q, "'"))
				}
			}
			if strings.Join(seen, ",") != strings.Join(ids, ",") {
				t.Errorf("the filters list %d ids, not each of the %d given once and in order", len(seen), len(ids))
			}
		})
	}
}

func TestMessageIDFilters_PackIDsIntoAsFewFiltersAsFitTheLengthInOrder(t *testing.T) {
	ids := make([]string, 3000)
	for i := range ids {
		ids[i] = fmt.Sprintf("ID:m-%05d", i) // quoted, 12 characters; with ", " 14
	}
	const maxLength = 1000
	filters := Selection{MessageIDs: ids}.MessageIDFilters(maxLength)
	var seen []string
	for i, f := range filters {
		if len(f) > maxLength {
			t.Errorf("filter %d has %d characters, over %d", i, len(f), maxLength)
		}
		inner, ok := strings.CutPrefix(f, "AMQUserID IN (")
		if !ok || !strings.HasSuffix(inner, ")") {
			t.Fatalf("filter %q is not an AMQUserID IN list", f)
		}
		quoted := strings.Split(strings.TrimSuffix(inner, ")"), ", ")
		if i < len(filters)-1 && len(f)+len(", ")+len(quoted[0]) <= maxLength {
			t.Errorf("filter %d (%d characters) had room for one more id", i, len(f))
		}
		for _, q := range quoted {
			seen = append(seen, strings.Trim(q, "'"))
		}
	}
	if strings.Join(seen, ",") != strings.Join(ids, ",") {
		t.Errorf("the filters list %d ids, not each of the %d given once and in order", len(seen), len(ids))
	}
	// An id longer than the length still gets a filter, alone.
	long := "ID:" + strings.Repeat("x", 2*maxLength)
	if got := (Selection{MessageIDs: []string{"ID:a", long, "ID:b"}}).MessageIDFilters(maxLength); len(got) != 3 {
		t.Errorf("an id over the length: %d filters, want 3 (one each)", len(got))
	}
}
