package transfer

import "testing"

func TestRangedIDSelector_RangeTestBeforeTheTerms(t *testing.T) {
	tests := []struct {
		ids  []int64
		want string
	}{
		{[]int64{7}, propOrigMessageID + " BETWEEN 7 AND 7 AND (" + propOrigMessageID + " = 7)"},
		{[]int64{12, 3, 9}, propOrigMessageID + " BETWEEN 3 AND 12 AND (" + propOrigMessageID + " = 12 OR " +
			propOrigMessageID + " = 3 OR " + propOrigMessageID + " = 9)"},
	}
	for _, tt := range tests {
		if got := rangedIDSelector(tt.ids); got != tt.want {
			t.Errorf("rangedIDSelector(%v) = %q, want %q", tt.ids, got, tt.want)
		}
	}
}
