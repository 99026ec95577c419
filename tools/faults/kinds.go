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
	// Kills at an instant drawn over the whole apply, its first millisecond included, rather
	// than once the target holds messages (Kind.Anytime).
	KillProviderAnytime  Kind = "kill-provider-anytime"
	KillTerraformAnytime Kind = "kill-terraform-anytime"
	// The broker faults of a move, met by a copy.
	KillSourceCopy  Kind = "kill-source-copy"
	KillTargetCopy  Kind = "kill-target-copy"
	CutSourceCopy   Kind = "cut-source-copy"
	CutTargetCopy   Kind = "cut-target-copy"
	StallSourceCopy Kind = "stall-source-copy"
	StallTargetCopy Kind = "stall-target-copy"
	// A copy applied from two working directories at the same moment, on one ledger.
	TwoAppliesCopy Kind = "two-applies-copy"
	// A move interrupted, then an artemis_transfer_return of its run applied while the next
	// apply of the transfer resumes it.
	ReturnDuringResume Kind = "return-during-resume"
	// The provider kills itself at an exact instant of the run (Plan.Point), through the
	// engine's hooks in a provider built with -tags faultpoints.
	KillProviderAtPoint Kind = "kill-provider-at-point"
	// A move interrupted, then a return of its run stopped twice (Plan.Stops) before it is
	// applied to completion (Kind.Returns).
	ReturnInterruptedTwice Kind = "return-interrupted-twice"
	// A move interrupted, then the next apply's read of the run's manifest stalled at the
	// source (Plan.Point is which read).
	SlowManifestRead Kind = "slow-manifest-read"
	// An artemis_queue removed from the configuration and applied while a producer sends to
	// it (Plan.Point, Plan.Race).
	ProducerRacingQueueDelete Kind = "producer-racing-queue-delete"
)

// FaultPoints are the instants kill-provider-at-point draws from: each step of a move's start
// and end the engine names, the first staging chunk and the first confirmation.
var FaultPoints = []string{"manifest-queue", "manifest-written", "staging-created", "stage:1", "confirm:1",
	"staging-removed", "settings-removed"}

// Copies reports whether the kind's iterations copy rather than move.
func (k Kind) Copies() bool {
	switch k {
	case PostgresRestart, KillProviderCopy, KillSourceCopy, KillTargetCopy, CutSourceCopy, CutTargetCopy,
		StallSourceCopy, StallTargetCopy, TwoAppliesCopy:
		return true
	}
	return false
}

// Anytime reports whether the kind's fault lands at an instant drawn over the whole first
// apply (Plan.AtFraction of a reference apply's duration) instead of at a message count.
func (k Kind) Anytime() bool { return k == KillProviderAnytime || k == KillTerraformAnytime }

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
	{KillProviderAnytime, "`SIGKILL` of the provider at an instant drawn uniformly over the whole apply, its first millisecond included: the harness first times a clean apply of the same size on queues of its own, then kills the provider that many seconds, times a fraction drawn from the seed, after the apply starts (as soon as the provider is started, when that instant comes before it). This meets the run's start: before its queues exist, between its queues and its manifest, the first staging chunk, and its end."},
	{KillTerraformAnytime, "`SIGKILL` of `terraform` at an instant drawn uniformly over the whole apply, as `kill-provider-anytime` draws it; its provider child, if started, is left to itself."},
	{KillSourceCopy, "A **copy**: `kill -9` of the source broker mid-copy; it is started again 1–6 s later."},
	{KillTargetCopy, "A **copy**: `kill -9` of the target broker mid-copy; it is started again 1–6 s later."},
	{CutSourceCopy, "A **copy**: every AMQP connection between the provider and the source broker closed at once."},
	{CutTargetCopy, "A **copy**: every AMQP connection between the provider and the target broker closed at once."},
	{StallSourceCopy, "A **copy**: the provider's AMQP connections to the source broker stop carrying bytes for 2–8 s."},
	{StallTargetCopy, "A **copy**: the provider's AMQP connections to the target broker stop carrying bytes for 2–8 s."},
	{TwoAppliesCopy, "A **copy** applied from two working directories with the same configuration and one ledger, started at the same moment (two teammates, two pipelines). The ledger admits one unfinished copy of a transfer: the second apply waits for the first's run and completes with it (an apply that fails is applied again, as an operator would). The target must hold every message once, and the ledger one run."},
	{ReturnDuringResume, "A move whose first apply is killed (the provider, `SIGKILL`) once the target holds messages; then the next apply, which resumes the run, and an `artemis_transfer_return` of that run applied while it runs. The two exclude each other: whichever loses is refused or finds nothing to do, and the transfer applied again until it succeeds moves every message once."},
	{KillProviderAtPoint, "The provider (built with `-tags faultpoints`) kills itself with `SIGKILL` at an exact instant of the run drawn from the seed: after the run's manifest queue is created, after its manifest is written, after its staging queues are created, after the first staging chunk, after the first confirmation from the target, after the staging queue is removed, or after the run's settings are removed (only the manifest queue left)."},
	{ReturnInterruptedTwice, "A move whose first apply is killed (the provider, `SIGKILL`) once the target holds messages; then an `artemis_transfer_return` of the run, stopped at an instant drawn from the seed, applied again and stopped again at another, and applied until it succeeds. Each stop is a `SIGKILL` of the provider or a Ctrl-C (`SIGINT` to terraform, sent by the provider built with `-tags faultpoints`) at an exact point of the return: as it starts counting what earlier processes relayed, or at the confirmation from the target of a drawn one of the staged messages it settles there (those the target may hold already, which a return relays rather than puts back). Every message must end exactly once on the source or the target, and nothing in staging."},
	{SlowManifestRead, "A move whose first apply is killed (the provider, `SIGKILL`) once the target holds messages; then the next apply's read of the run's manifest is slow: once its browser of the run's manifest queue is attached, every connection to the source broker stalls for 2–10 s (the harness's proxy holds the browser's credit and everything else), at the first, second or third read of the manifest (finding the run, resuming it, reading its in-flight record). A slow read is not a missing manifest: the apply, or the next, must resume the same run (the state's `run_id`), move every message once, and leave messages produced after the run began on the source."},
	{ProducerRacingQueueDelete, "An `artemis_queue` (no `force_destroy`) removed from the configuration and applied while a producer sends to its `address::queue`: one link throughout, or (3 plans in 4) a link per burst of 1–50 messages, as a batch job sends; in 3 plans in 4 a consumer drains the queue meanwhile, so that it looks idle to the delete's first count. The producer's burst lands at a point drawn from the seed: while the provider (built with `-tags faultpoints`) holds the delete for 2 s after its first check found the queue idle, or after it blocked the address and before its last check, or wherever the running producer meets the delete. The delete may go ahead or be refused; every message the broker accepted must be found exactly once (consumed, or on the queue), a refused delete must leave the queue enabled and the address taking messages, and once the queue is drained the same apply must delete it."},
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
	// Point, for kill-provider-at-point, is where in the run the provider dies (FaultPoints).
	Point string `json:"point,omitempty"`
	// Stops, for return-interrupted-twice, are how the first two returns of the run stop.
	Stops [2]ReturnStop `json:"return_stops,omitzero"`
	// Race, for producer-racing-queue-delete, is how its producer and consumer go.
	Race QueueDeleteRace `json:"race,omitzero"`
	// AtFraction, for the kinds that land anytime, is where in the apply the fault lands, as a
	// fraction of a reference apply's duration, drawn uniformly from [0, 1).
	AtFraction float64 `json:"at_fraction,omitempty"`
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
	case KillSource, KillTarget, KillSourceCopy, KillTargetCopy:
		p.Downtime = time.Second + time.Duration(r.IntN(5000))*time.Millisecond
	case FailoverTarget:
		p.Downtime = 3*time.Second + time.Duration(r.IntN(7000))*time.Millisecond
	case StallSource, StallTarget, StallSourceCopy, StallTargetCopy:
		p.Downtime = 2*time.Second + time.Duration(r.IntN(6000))*time.Millisecond
	case ManagementBusy:
		p.TriggerAt = 0
		p.Downtime = 5*time.Second + time.Duration(r.IntN(15000))*time.Millisecond
	case TargetFull:
		p.TriggerAt = 0 // the consumer starts with the apply; the address fills at once
	case KillProviderAnytime, KillTerraformAnytime:
		p.TriggerAt = 0
		p.AtFraction = r.Float64()
	case TwoAppliesCopy:
		p.TriggerAt = 0 // both applies start together; there is nothing else to inject
	case KillProviderAtPoint:
		p.TriggerAt = 0
		p.Point = FaultPoints[r.IntN(len(FaultPoints))]
	case ReturnInterruptedTwice:
		for i := range p.Stops {
			p.Stops[i] = drawReturnStop(r)
		}
	case ProducerRacingQueueDelete:
		p.Point = QueueDeletePoints[r.IntN(len(QueueDeletePoints))]
		p.Race = drawQueueDeleteRace(r)
		p.TriggerAt = min(p.TriggerAt, 200+r.IntN(800)) // the delete races the producer's first second or so
	case SlowManifestRead:
		p.Point = fmt.Sprintf("read:%d", 1+r.IntN(manifestReads))
		p.Downtime = 2*time.Second + time.Duration(r.IntN(8000))*time.Millisecond
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
