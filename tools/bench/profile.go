package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// Case is one benchmark case: a source queue of Count messages of Size bytes each, filled by
// Producer.
type Case struct {
	Count int `json:"count"`
	Size  int `json:"size"`
	// Producer fills the source queue.
	Producer Producer `json:"producer,omitempty"`
	// Reps, when above 0, is how many times each contender moves this case instead of the
	// profile's Reps: a queue of a million is raced once.
	Reps int `json:"reps,omitempty"`
	// Only, when not empty, limits this case to these contender ids: a million messages are
	// raced by our relay and artemis transfer's default alone, which is what the goal compares.
	Only []string `json:"only,omitempty"`
}

// Runs says whether contender id moves this case.
func (c Case) Runs(id string) bool {
	if id == ContenderApplyBase && (c.Count != goalCase || c.Size != kib) {
		return false // the baseline is measured where the ratio to artemis transfer is stated
	}
	return len(c.Only) == 0 || contains(c.Only, id)
}

// Producer is what fills a case's source queue. What sent a message matters to a move: a Core
// message is converted to AMQP by the source broker when an AMQP client consumes it.
type Producer string

const (
	// ProducerOurs is our own pipelined AMQP sender (the zero value): fast, for development.
	ProducerOurs Producer = ""
	// ProducerCore and ProducerAMQP are Artemis's CLI producer (`artemis producer`) over Core and over
	// AMQP, as operators fill queues.
	ProducerCore Producer = "core"
	ProducerAMQP Producer = "amqp"
)

// Name is the case as a person reads it: "100,000 x 1 KiB", "100,000 x 1 KiB, Core fill".
func (c Case) Name() string {
	name := groupThousands(int64(c.Count)) + " x " + harness.SizeName(c.Size)
	switch c.Producer {
	case ProducerCore:
		name += ", Core fill"
	case ProducerAMQP:
		name += ", AMQP fill"
	}
	return name
}

// Slug is the case as part of a queue name.
func (c Case) Slug() string {
	if c.Producer != ProducerOurs {
		return fmt.Sprintf("n%d-s%d-f%s", c.Count, c.Size, c.Producer)
	}
	return fmt.Sprintf("n%d-s%d", c.Count, c.Size)
}

// Bytes is the case's payload volume.
func (c Case) Bytes() int64 { return int64(c.Count) * int64(c.Size) }

// Profile is a set of cases and how often each is measured.
type Profile struct {
	Name  string `json:"name"`
	Cases []Case `json:"cases"`
	// MemoryCases are moved by our relay alone, once: sizes too slow to race every contender
	// on in this profile, measured for peak memory and preflight time at that queue size.
	MemoryCases []Case `json:"memory_cases,omitempty"`
	// Reps is how many times each contender moves each case; tables show medians.
	Reps int `json:"reps"`
	// WarmupCount is the size (1 KiB messages) of the untimed moves that warm the brokers'
	// JIT before the first measurement (bench.warmUp); 0 skips them.
	WarmupCount int `json:"warmup_count"`
	// PerfSeconds is how long each `artemis perf producer` runs, PerfSkip how many of its first
	// one-second intervals are left out of the rate (client and broker JIT warm-up: a fresh
	// perf producer takes about five seconds to reach its steady rate), and PerfReps how many
	// times the raw limit is measured per message size and protocol.
	PerfSeconds int `json:"perf_seconds"`
	PerfSkip    int `json:"perf_skip"`
	PerfReps    int `json:"perf_reps"`
	// BreakdownCount is the size (1 KiB messages) of the queues the parts of a move are
	// measured on, each on its own (Breakdown); 0 skips it.
	BreakdownCount int `json:"breakdown_count,omitempty"`
	// ResumeCount is the size (1 KiB messages, Core fill) of the move whose relay is killed
	// and resumed to time a resume's first relayed batch (ResumeResult); 0 skips it.
	ResumeCount int `json:"resume_count,omitempty"`
	// DepthCount is how many 1 KiB messages the target's store by depth stores, with and
	// without duplicate ids (DepthStore); 0 skips it.
	DepthCount int `json:"depth_count,omitempty"`
	// ScaleCases are the depths of the scale curve (ScaleCurve): each filled once, copied and
	// then moved by our relay.
	ScaleCases []Case `json:"scale_cases,omitempty"`
	// Timeout bounds the whole benchmark.
	Timeout time.Duration `json:"-"`
}

// RepsOf is how many times each contender moves case c.
func (p Profile) RepsOf(c Case) int {
	if c.Reps > 0 {
		return c.Reps
	}
	return p.Reps
}

const (
	kib = 1 << 10
	mib = 1 << 20
)

// standardCases are the cases of issue #6, filled by Artemis's CLI producer as issue #15 asks:
// over Core, and the goal case over AMQP too.
var standardCases = []Case{{Count: 10_000, Size: kib, Producer: ProducerCore}, {Count: 100_000, Size: kib, Producer: ProducerCore},
	{Count: 100_000, Size: kib, Producer: ProducerAMQP}, {Count: 200, Size: mib, Producer: ProducerCore}, {Count: 20, Size: 10 * mib, Producer: ProducerCore}}

// millionCase is the scale case of issue #15: a million small messages, filled as the goal case
// is, so that its rate compares with the 100,000 one's; raced once by our relay and by artemis
// transfer with its default commit interval.
var millionCase = Case{Count: 1_000_000, Size: kib, Producer: ProducerCore, Reps: 1, Only: []string{ContenderOurs, ContenderCoreDflt}}

// scaleCases are the depths of the scale curve (issue #25), filled as the goal case is.
var scaleCases = []Case{{Count: 10_000, Size: kib, Producer: ProducerCore}, {Count: 100_000, Size: kib, Producer: ProducerCore},
	{Count: 1_000_000, Size: kib, Producer: ProducerCore}, {Count: 3_000_000, Size: kib, Producer: ProducerCore}}

// Profiles returns the profiles by name: quick for development, standard for the published
// results (with a million small messages moved by our relay alone, for its memory and its rate),
// long for the standard cases plus a million small messages raced once by every contender.
// Standard and long also measure the parts of a move on their own and a resume. Scale is the
// scale curve alone: one queue from 10,000 to 3,000,000 x 1 KiB, copied and moved by our relay.
func Profiles() map[string]Profile {
	return map[string]Profile{
		"quick": {Name: "quick", Cases: []Case{{Count: 2_000, Size: kib}, {Count: 2_000, Size: kib, Producer: ProducerCore}, {Count: 5, Size: mib}}, Reps: 1, WarmupCount: 1_000,
			PerfSeconds: 6, PerfSkip: 2, PerfReps: 1, BreakdownCount: 2_000, ResumeCount: 5_000, Timeout: 30 * time.Minute},
		"standard": {Name: "standard", Cases: append([]Case(nil), standardCases...), MemoryCases: []Case{{Count: 1_000_000, Size: kib, Producer: ProducerCore}}, Reps: 3, WarmupCount: 50_000,
			PerfSeconds: 15, PerfSkip: 5, PerfReps: 1, BreakdownCount: 100_000, ResumeCount: 20_000, DepthCount: 1_000_000, Timeout: 2 * time.Hour},
		"long": {Name: "long", Cases: append(append([]Case(nil), standardCases...), millionCase), Reps: 3,
			WarmupCount: 50_000, PerfSeconds: 15, PerfSkip: 5, PerfReps: 1, BreakdownCount: 100_000, ResumeCount: 20_000, DepthCount: 1_000_000, Timeout: 4 * time.Hour},
		"scale": {Name: "scale", ScaleCases: scaleCases, Reps: 1, WarmupCount: 50_000, Timeout: 3 * time.Hour},
	}
}

// ProfileByName returns a profile or an error that lists the known ones.
func ProfileByName(name string) (Profile, error) {
	p, ok := Profiles()[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown benchmark profile %q: use quick, standard, long or scale", name)
	}
	return p, nil
}

// ParseCases reads "COUNTxSIZE[/FILL][@REPS][=ID+ID...],..." (sizes in bytes; FILL core or amqp
// for Artemis's CLI producer, none for ours; REPS instead of the profile's repetitions; the ids of
// the only contenders that move the case), for runs of chosen cases.
func ParseCases(s string) ([]Case, error) {
	var cases []Case
	for _, part := range strings.Split(s, ",") {
		var c Case
		spec, only, hasOnly := strings.Cut(strings.TrimSpace(part), "=")
		if hasOnly {
			for _, id := range strings.Split(only, "+") {
				if id = strings.TrimSpace(id); id != "" {
					c.Only = append(c.Only, id)
				}
			}
			if len(c.Only) == 0 {
				return nil, fmt.Errorf("case %q: no contender id after =, e.g. 1000000x1024/core@1=ours+transfer-core-default", part)
			}
		}
		spec, reps, hasReps := strings.Cut(spec, "@")
		if hasReps {
			if _, err := fmt.Sscanf(reps, "%d", &c.Reps); err != nil || c.Reps <= 0 {
				return nil, fmt.Errorf("case %q: repetitions %q: want a number above 0 after @, e.g. 1000000x1024/core@1", part, reps)
			}
		}
		shape, fill, _ := strings.Cut(spec, "/")
		if _, err := fmt.Sscanf(shape, "%dx%d", &c.Count, &c.Size); err != nil || c.Count <= 0 || c.Size <= 0 {
			return nil, fmt.Errorf("case %q: want COUNTxSIZE[/FILL] with both numbers above 0, e.g. 100000x1024/core", part)
		}
		switch c.Producer = Producer(fill); c.Producer {
		case ProducerOurs, ProducerCore, ProducerAMQP:
		default:
			return nil, fmt.Errorf("case %q: fill %q: use core or amqp (Artemis's CLI producer), or none for ours", part, fill)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// MessageSizes are the distinct message sizes of the profile's cases, in case order.
func (p Profile) MessageSizes() []int {
	var sizes []int
	seen := map[int]bool{}
	for _, c := range p.Cases {
		if !seen[c.Size] {
			seen[c.Size] = true
			sizes = append(sizes, c.Size)
		}
	}
	return sizes
}

// Tool says which program moves the messages.
type Tool string

const (
	// ToolRelay is this project's engine (transfer.Engine.Move, or Engine.Copy for a contender
	// with Copy set) in a child process.
	ToolRelay Tool = "relay"
	// ToolArtemisTransfer is `artemis transfer` from the brokers' own distribution.
	ToolArtemisTransfer Tool = "artemis-transfer"
	// ToolTerraform is a whole `terraform apply` of an artemis_queue_transfer, as a user runs
	// it: terraform and provider start, plan (with its preflight), the move, and state.
	ToolTerraform Tool = "terraform-apply"
)

// Contender is one way of moving a case.
type Contender struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Tool     Tool   `json:"tool"`
	Protocol string `json:"protocol,omitempty"` // artemis transfer: core or amqp, on both sides
	// CommitInterval is the --commit-interval given to artemis transfer; 0 gives none, so the
	// tool's own default applies.
	CommitInterval int `json:"commit_interval,omitempty"`
	// Copy makes our relay copy (transfer.ModeCopy, with a ledger) instead of move: the source
	// keeps every message.
	Copy bool `json:"copy,omitempty"`
	// ProviderDir, for a terraform contender, is the folder of the provider it runs when that is
	// not the one built from this checkout (Config.ProviderDir): an earlier revision's.
	ProviderDir string `json:"-"`
}

// Contender ids, used in results.json and by the chart.
const (
	ContenderOurs  = "ours"
	ContenderCopy  = "ours-copy"
	ContenderApply = "ours-apply"
	// ContenderApplyBase is ours-apply with the provider of an earlier revision (the baseline),
	// run on the goal case only, so that a change's effect is measured against it in one run.
	ContenderApplyBase = "ours-apply-baseline"
	ContenderCoreDflt  = "transfer-core-default"
	ContenderCoreTuned = "transfer-core-tuned"
	ContenderAMQPDflt  = "transfer-amqp-default"
	ContenderAMQPTuned = "transfer-amqp-tuned"
)

// Contenders are our relay, the four artemis transfer variants (core and amqp, each with its
// default commit interval (defaultCommit, as its help states it; only for the label) and with
// tunedCommit), and our relay copying instead of moving. The copy comes last so that the
// warm-up, which takes the first two, stays ours and artemis transfer.
func Contenders(defaultCommit, tunedCommit int) []Contender {
	dflt := "default"
	if defaultCommit > 0 {
		dflt = fmt.Sprintf("default %d", defaultCommit)
	}
	return []Contender{
		{ID: ContenderOurs, Label: "ours (relay)", Tool: ToolRelay},
		{ID: ContenderCoreDflt, Label: "artemis transfer core, commit " + dflt, Tool: ToolArtemisTransfer, Protocol: "core"},
		{ID: ContenderCoreTuned, Label: fmt.Sprintf("artemis transfer core, commit %d", tunedCommit), Tool: ToolArtemisTransfer,
			Protocol: "core", CommitInterval: tunedCommit},
		{ID: ContenderAMQPDflt, Label: "artemis transfer amqp, commit " + dflt, Tool: ToolArtemisTransfer, Protocol: "amqp"},
		{ID: ContenderAMQPTuned, Label: fmt.Sprintf("artemis transfer amqp, commit %d", tunedCommit), Tool: ToolArtemisTransfer,
			Protocol: "amqp", CommitInterval: tunedCommit},
		{ID: ContenderCopy, Label: "ours (copy)", Tool: ToolRelay, Copy: true},
	}
}

// groupThousands writes 100000 as 100,000.
func groupThousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + groupThousands(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
