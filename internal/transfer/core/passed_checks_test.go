package core

import (
	"testing"
	"time"
)

func TestPassedChecks_StandsInOnceWithinTheWindow(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := &PassedChecks{now: func() time.Time { return now }}
	spec := Spec{Mode: ModeMove, Source: Endpoint{Broker: "a", Queue: "q"}, Target: Endpoint{Broker: "b", Queue: "q"}}
	key := CheckKey(spec, Options{})
	if c.take(key) {
		t.Fatal("a check that never ran stood in for one")
	}
	c.Note(key, true)
	now = now.Add(checkReuseWindow - time.Second)
	if !c.take(key) {
		t.Fatal("a pass within the window did not stand in")
	}
	if c.take(key) {
		t.Fatal("one pass stood in for two runs")
	}
	c.Note(key, true)
	now = now.Add(checkReuseWindow)
	if c.take(key) {
		t.Fatal("a pass older than the window stood in")
	}
}

func TestPassedChecks_ARefusalForgetsAnEarlierPass(t *testing.T) {
	c := &PassedChecks{}
	spec := Spec{Mode: ModeMove, Source: Endpoint{Broker: "a", Queue: "q"}, Target: Endpoint{Broker: "b", Queue: "q"}}
	key := CheckKey(spec, Options{})
	c.Note(key, true)
	c.Note(key, false)
	if c.take(key) {
		t.Fatal("a pass stood in after a refusal")
	}
}

func TestPassedChecks_KeyedByTransferAndInFlightWindow(t *testing.T) {
	c := &PassedChecks{}
	spec := Spec{Mode: ModeMove, Source: Endpoint{Broker: "a", Queue: "q"}, Target: Endpoint{Broker: "b", Queue: "q"}}
	c.Note(CheckKey(spec, Options{}), true)
	other := spec
	other.Selection.Filter = "color = 'red'"
	if c.take(CheckKey(other, Options{})) {
		t.Fatal("a pass stood in for another selection")
	}
	// The duplicate cache is judged against the in-flight window: a larger batch is another check.
	if c.take(CheckKey(spec, Options{BatchSize: 5000})) {
		t.Fatal("a pass stood in for another batch size")
	}
	if !c.take(CheckKey(spec, Options{BatchSize: DefaultBatchSize})) {
		t.Fatal("the default batch size is the same check as an unset one")
	}
	var none *PassedChecks
	none.Note("k", true)
	if none.take("k") {
		t.Fatal("a nil PassedChecks stood in")
	}
}
