package faults

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
)

func TestNewPlan_ReturnInterruptedTwiceDrawsBothStopsOfEveryKind(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		p := NewPlan(seed, ReturnInterruptedTwice, 2000, 4000)
		if p.TriggerAt <= 0 || p.TriggerAt >= p.Count {
			t.Fatalf("seed %d: trigger %d of %d", seed, p.TriggerAt, p.Count)
		}
		for _, s := range p.Stops {
			if !slices.Contains([]string{ActionKill, ActionInterrupt}, s.Action) || s.At < 0 || s.At >= 1 ||
				(s.Point != ReturnConfirm && s.Point != PointReturnCounting) {
				t.Fatalf("seed %d: stop %+v", seed, s)
			}
			seen[s.Action+"@"+s.Point] = true
		}
	}
	if len(seen) != 4 {
		t.Errorf("200 seeds drew %v, want each action at each point", seen)
	}
	if !ReturnInterruptedTwice.Returns() || KillProvider.Returns() || ReturnInterruptedTwice.Copies() {
		t.Error("only return-interrupted-twice returns its run, and it moves")
	}
}

func TestNewPlan_SlowManifestReadDrawsEveryReadAndAStallOfTwoToTenSeconds(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		p := NewPlan(seed, SlowManifestRead, 2000, 4000)
		if p.Downtime < 2*time.Second || p.Downtime > 10*time.Second || p.TriggerAt <= 0 {
			t.Fatalf("seed %d: %+v", seed, p)
		}
		seen[p.Point] = true
	}
	if len(seen) != manifestReads || !seen["read:1"] || !seen["read:3"] {
		t.Errorf("200 seeds drew reads %v", seen)
	}
}

func TestMoveProblems_AReturnLeavesMessagesOnTheSource(t *testing.T) {
	it := Iteration{Plan: Plan{Kind: ReturnInterruptedTwice}, Recovered: true, Counts: Counts{LeftSource: 5}}
	if p := moveProblems(it); len(p) != 0 {
		t.Errorf("a returned run's messages on the source: %v", p)
	}
	it.Doubled = 1
	if got := strings.Join(moveProblems(it), "; "); got != "1 doubled" {
		t.Errorf("problems %q", got)
	}
}

func TestTally_CountsTheLateMessagesApart(t *testing.T) {
	msg := func(id string) *amqp.Message {
		return &amqp.Message{Properties: &amqp.MessageProperties{MessageID: id}}
	}
	tl := NewTally("f1", 2)
	tl.Late = NewTally("l1", 3)
	tl.add(msg("f1-0"), placeTarget)
	tl.add(msg("f1-1"), placeTarget)
	tl.add(msg("l1-0"), placeSource)
	tl.add(msg("l1-1"), placeTarget) // moved: the run was started again
	tl.add(msg("l1-1"), placeSource)
	if c := tl.Counts(); c != (Counts{Delivered: 2}) {
		t.Errorf("the run's counts %+v", c)
	}
	want := "1 messages produced after the run's start were moved: the run was started again, not resumed; " +
		"of the messages produced after the run's start, 1 lost, 1 doubled, 0 in staging"
	if got := strings.Join(lateProblems(tl.Late), "; "); got != want {
		t.Errorf("problems %q,\nwant %q", got, want)
	}
	if p := lateProblems(nil); p != nil {
		t.Errorf("no late messages: %v", p)
	}
}

func TestStateRunID(t *testing.T) {
	dir := t.TempDir()
	state := `{"version":4,"resources":[{"mode":"managed","type":"artemis_queue_transfer","name":"fault","instances":[{"attributes":{"run_id":"r-1"}}]}]}`
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfstate"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := stateRunID(dir); err != nil || id != "r-1" {
		t.Errorf("run id %q, %v", id, err)
	}
	if _, err := stateRunID(t.TempDir()); err == nil {
		t.Error("no state: no error")
	}
}
