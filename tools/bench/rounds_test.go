package bench

import (
	"reflect"
	"testing"
)

func TestRotatedRounds_EachContenderOncePerRoundAndEachPositionInTurn(t *testing.T) {
	got := rotatedRounds([]string{"a", "b", "c"}, 4)
	want := [][]string{{"a", "b", "c"}, {"b", "c", "a"}, {"c", "a", "b"}, {"a", "b", "c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rounds %v, want %v", got, want)
	}
	if got := rotatedRounds([]string{"a", "b"}, 1); !reflect.DeepEqual(got, [][]string{{"a", "b"}}) {
		t.Errorf("one round %v, want the contenders in their order", got)
	}
	if rotatedRounds([]string{"a"}, 0) != nil || rotatedRounds([]string(nil), 3) != nil {
		t.Error("no rounds wanted for no repetitions or no contenders")
	}
}
