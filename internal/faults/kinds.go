package faults

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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
	// The copy kinds: their iterations copy (mode = "copy", with the harness's ledger) instead of
	// moving, and the checker holds them to a copy's promise (Kind.Copies).
	PostgresRestart  Kind = "postgres-restart"   // the ledger's PostgreSQL stopped, started again after seconds
	KillProviderCopy Kind = "kill-provider-copy" // SIGKILL of terraform-provider-artemis during a copy
)

// Copies reports whether the kind's iterations copy rather than move.
func (k Kind) Copies() bool { return k == PostgresRestart || k == KillProviderCopy }

// KindInfo says what a fault does, for the log and the published page.
type KindInfo struct {
	Kind Kind
	What string
}

// Kinds are the faults the harness runs, in report order. Schedule gives iteration i the kind
// Kinds[i % len(Kinds)], so a kind added here moves the later iterations of a run seed to other
// kinds: new kinds go last, which keeps the first len(Kinds) iterations of every run seed as
// they were, and every (seed, kind) replays as it did (NewPlan does not read Kinds).
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
	{PostgresRestart, "A **copy** (`mode = \"copy\"`): the ledger's PostgreSQL is stopped (fast shutdown: its connections are cut) mid-copy and started again after 2–8 s. The copy must wait for its ledger and carry on."},
	{KillProviderCopy, "A **copy**: `SIGKILL` of the `terraform-provider-artemis` process during `terraform apply`. The killed process still holds the run's ledger lease (90 s); the next apply sees that its holder has ended (its ledger session is gone) and takes the run over at once, resuming the copy. (A holder still running is refused until its lease lapses; the harness then waits until the time the refusal names, as an operator would.)"},
}

// Kind names ParseKinds accepts.
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
	return "", fmt.Errorf("unknown fault kind %q (one of %v)", s, kindNames())
}

// ParseKinds checks a comma-separated list of kinds given on the command line.
func ParseKinds(s string) ([]Kind, error) {
	var kinds []Kind
	for _, name := range strings.Split(s, ",") {
		k, err := ParseKind(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds, nil
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
	// PerKind is the number of iterations of each kind the run covers (every kind, or the
	// ones it was given), taken in turn.
	PerKind int
	// MinCount and MaxCount bound the messages of one iteration.
	MinCount, MaxCount int
}

// Profiles are the named profiles of scripts/faults.sh.
var Profiles = map[string]Profile{
	"short": {Name: "short", PerKind: 1, MinCount: 2000, MaxCount: 4000},
	"long":  {Name: "long", PerKind: 10, MinCount: 2000, MaxCount: 20000},
}

// Iterations is how many iterations the profile runs over kinds (nil: every kind).
func (p Profile) Iterations(kinds []Kind) int {
	if len(kinds) == 0 {
		return p.PerKind * len(Kinds)
	}
	return p.PerKind * len(kinds)
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
	case PostgresRestart:
		p.Downtime = 2*time.Second + time.Duration(r.IntN(6000))*time.Millisecond
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

// Schedule lists the (seed, kind) of each iteration of a run: the kinds of only (nil: every
// kind, in Kinds order) in turn, seeds drawn from the run's seed, so that a whole run replays
// from one number and each iteration from its own. The seeds do not depend on the kinds: the
// i-th iteration of a run seed has the same seed whatever kinds the run covers.
func Schedule(runSeed uint64, iterations int, only []Kind) []Plan {
	kinds := only
	if len(kinds) == 0 {
		kinds = make([]Kind, len(Kinds))
		for i, k := range Kinds {
			kinds[i] = k.Kind
		}
	}
	r := rand.New(rand.NewPCG(runSeed, 0x6661756c7473))
	plans := make([]Plan, 0, iterations)
	for i := 0; i < iterations; i++ {
		plans = append(plans, Plan{Seed: r.Uint64() % 1_000_000_000, Kind: kinds[i%len(kinds)]})
	}
	return plans
}
