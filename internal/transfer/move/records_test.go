package move

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

func TestRangedIDSelector_RangeTestBeforeTheTerms(t *testing.T) {
	tests := []struct {
		ids  []int64
		want string
	}{
		{[]int64{7}, core.PropOrigMessageID + " BETWEEN 7 AND 7 AND (" + core.PropOrigMessageID + " = 7)"},
		{[]int64{12, 3, 9}, core.PropOrigMessageID + " BETWEEN 3 AND 12 AND (" + core.PropOrigMessageID + " = 12 OR " +
			core.PropOrigMessageID + " = 3 OR " + core.PropOrigMessageID + " = 9)"},
	}
	for _, tt := range tests {
		if got := rangedIDSelector(tt.ids); got != tt.want {
			t.Errorf("rangedIDSelector(%v) = %q, want %q", tt.ids, got, tt.want)
		}
	}
}

func TestIDSelector_SelectsEachSourceIDByAnORTerm(t *testing.T) {
	tests := []struct {
		ids  []int64
		want string
	}{
		{[]int64{42}, "_AMQ_ORIG_MESSAGE_ID = 42"},
		{[]int64{1, 2, 3}, "_AMQ_ORIG_MESSAGE_ID = 1 OR _AMQ_ORIG_MESSAGE_ID = 2 OR _AMQ_ORIG_MESSAGE_ID = 3"},
		{[]int64{0, math.MaxInt64}, "_AMQ_ORIG_MESSAGE_ID = 0 OR _AMQ_ORIG_MESSAGE_ID = 9223372036854775807"},
		// An empty selector selects every message: callers never pass an empty list.
		{nil, ""},
	}
	for _, tt := range tests {
		if got := idSelector(tt.ids); got != tt.want {
			t.Errorf("idSelector(%v) = %q, want %q", tt.ids, got, tt.want)
		}
	}
}

func TestIDSelector_OfAFullChunkHasOneTermPerID(t *testing.T) {
	ids := make([]int64, inFlightSelectorChunk)
	for i := range ids {
		ids[i] = int64(1000 + i)
	}
	if terms := strings.Split(idSelector(ids), " OR "); len(terms) != inFlightSelectorChunk {
		t.Errorf("%d ids gave %d terms", len(ids), len(terms))
	}
}

// The ids a record owes an earlier one are settled by a return like the in-flight ones, but are
// not counted as in flight: the earlier record's reader counted them already, or not.
func TestInFlightRecord_OwedIDsMayBeOnTheTargetAndAreNotCountedAsInFlight(t *testing.T) {
	rec := inFlightRecord{SourceIDs: []int64{5, 6}, Confirmed: []int64{3, 4, 5}, Owed: []int64{1, 2, 4, 6}}
	if got, want := rec.mayBeOnTarget(), []int64{5, 6, 3, 4, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("may be on the target: %v, want %v", got, want)
	}
	if got, want := rec.uncounted(), []int64{6}; !slices.Equal(got, want) {
		t.Errorf("uncounted: %v, want %v", got, want)
	}
}
