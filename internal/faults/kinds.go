package faults

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Kind is one fault the harness injects.
type Kind string

// The fault kinds, in the order the report lists them.
const (
	KillProvider   Kind = "kill-provider"   // SIGKILL of terraform-provider-artemis during apply
	KillTerraform  Kind = "kill-terraform"  // SIGKILL of terraform itself during apply
	Interrupt      Kind = "ctrl-c"          // SIGINT to terraform's process group, as a terminal's Ctrl-C
	KillSource     Kind = "kill-source"     // kill -9 of the source broker, restarted after a pause
	KillTarget     Kind = "kill-target"     // kill -9 of the target broker, restarted after a pause
	CutSource      Kind = "cut-source"      // every relay connection to the source closed at once
	CutTarget      Kind = "cut-target"      // every relay connection to the target closed at once
	StallSource    Kind = "stall-source"    // the relay's connections to the source go silent for seconds
	StallTarget    Kind = "stall-target"    // the relay's connections to the target go silent for seconds
	TargetFull     Kind = "target-full"     // a small BLOCK target address, drained by a slow consumer
	ManagementBusy Kind = "management-lock" // another client holds the source's management lock
	FailoverTarget Kind = "failover-target" // target URLs [node1, node2]; node1 killed and restarted
	// PostgresRestart: PostgreSQL stopped and started during a copy-mode run. Copy mode does not
	// exist yet; when it does, add the kind to Kinds, its injection to inject.go (stop and start
	// through scripts/testenv.sh, with the owner token) and a ledger check to the checker.
	PostgresRestart Kind = "postgres-restart"
)

// KindInfo says what a fault does, for the log and the published page.
type KindInfo struct {
	Kind Kind
	What string
}

// Kinds are the faults the harness runs, in report order.
var Kinds = []KindInfo{
	{KillProvider, "`SIGKILL` of the `terraform-provider-artemis` process (the child of `terraform`) during `terraform apply`."},
	{KillTerraform, "`SIGKILL` of the `terraform` process during apply; its provider child is left to itself, as when a CI runner dies."},
	{Interrupt, "`SIGINT` to terraform's process group, as Ctrl-C in a terminal: terraform asks the provider to stop, and the apply fails."},
	{KillSource, "`kill -9` of the source broker, restarted after a pause of 1–6 s."},
	{KillTarget, "`kill -9` of the target broker, restarted after a pause of 1–6 s."},
	{CutSource, "Every AMQP connection between the relay and the source broker closed at once (a loopback TCP proxy in between)."},
	{CutTarget, "Every AMQP connection between the relay and the target broker closed at once."},
	{StallSource, "The relay's AMQP connections to the source broker stop carrying bytes, both ways, for 2–8 s, and then resume."},
	{StallTarget, "The relay's AMQP connections to the target broker stop carrying bytes, both ways, for 2–8 s, and then resume."},
	{TargetFull, "The target address holds at most 256 KiB with policy `BLOCK`; a slow consumer started by the harness drains it while the relay waits."},
	{ManagementBusy, "Another client holds the source broker's management lock with back-to-back `moveMessages` of a large queue for 5–20 s, from the start of the apply."},
	{FailoverTarget, "The target key names two cluster nodes (`amqp_urls = [node1, node2]`, `management_url` on node1); node1 is killed mid-run and restarted after 3–10 s. The relay must wait for node1, not write to node2."},
}

// Kind names ParseKind accepts.
func kindNames() []string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k.Kind)
	}
	return names
}

// ParseKind checks a kind given on the command line.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k.Kind) == s {
			return k.Kind, nil
		}
	}
	if Kind(s) == PostgresRestart {
		return "", fmt.Errorf("fault kind %q needs copy mode, which does not exist yet", s)
	}
	return "", fmt.Errorf("unknown fault kind %q (one of %v)", s, kindNames())
}

// Plan is everything an iteration's seed decides: replaying a seed and kind gives the same
// plan. What the machine's speed decides (when the trigger is reached) is not in it.
type Plan struct {
	Seed  uint64 `json:"seed"`
	Kind  Kind   `json:"kind"`
	Count int    `json:"count"` // messages on the source queue
	// TriggerAt is the number of messages on the target at which the fault is injected
	// (0: as soon as terraform starts).
	TriggerAt int           `json:"trigger_at"`
	Downtime  time.Duration `json:"downtime_ns"` // a broker's pause before restart; a stall's length; a lock's hold
}

// Profile bounds a harness run.
type Profile struct {
	Name string
	// Iterations is the number of iterations, spread over the kinds in turn.
	Iterations int
	// MinCount and MaxCount bound the messages of one iteration.
	MinCount, MaxCount int
}

// Profiles are the named profiles of scripts/faults.sh.
var Profiles = map[string]Profile{
	"short": {Name: "short", Iterations: len(Kinds), MinCount: 2000, MaxCount: 4000},
	"long":  {Name: "long", Iterations: 10 * len(Kinds), MinCount: 2000, MaxCount: 20000},
}

// MessageSize is every message's body size.
const MessageSize = 1024

// NewPlan derives an iteration's plan from its seed and kind.
func NewPlan(seed uint64, kind Kind, minCount, maxCount int) Plan {
	r := rand.New(rand.NewPCG(seed, uint64(len(kind))))
	p := Plan{Seed: seed, Kind: kind, Count: minCount}
	if maxCount > minCount {
		p.Count = minCount + r.IntN(maxCount-minCount+1)
	}
	// The fault lands between 5% and 60% of the way: early enough that a fast relay has not
	// finished before the poll sees the target pass it.
	p.TriggerAt = p.Count/20 + r.IntN(p.Count*55/100+1)
	switch kind {
	case KillSource, KillTarget:
		p.Downtime = time.Second + time.Duration(r.IntN(5000))*time.Millisecond
	case FailoverTarget:
		p.Downtime = 3*time.Second + time.Duration(r.IntN(7000))*time.Millisecond
	case StallSource, StallTarget:
		p.Downtime = 2*time.Second + time.Duration(r.IntN(6000))*time.Millisecond
	case ManagementBusy:
		p.TriggerAt = 0
		p.Downtime = 5*time.Second + time.Duration(r.IntN(15000))*time.Millisecond
	case TargetFull:
		p.TriggerAt = 0 // the consumer starts with the apply; the address fills at once
	}
	return p
}

// Schedule lists the (seed, kind) of each iteration of a run: kinds in turn, seeds drawn from
// the run's seed, so that a whole run replays from one number and each iteration from its own.
func Schedule(runSeed uint64, iterations int, only Kind) []Plan {
	r := rand.New(rand.NewPCG(runSeed, 0x6661756c7473))
	plans := make([]Plan, 0, iterations)
	for i := 0; i < iterations; i++ {
		kind := Kinds[i%len(Kinds)].Kind
		if only != "" {
			kind = only
		}
		plans = append(plans, Plan{Seed: r.Uint64() % 1_000_000_000, Kind: kind})
	}
	return plans
}
