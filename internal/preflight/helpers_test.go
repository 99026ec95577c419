package preflight

import (
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// What several of this package's tests share.

// typical is a healthy plan: a filtered move of 42 messages between ordinary queues on two
// brokers with default settings, duplicate detection working and nothing unusual queued.
func typical() Facts {
	return Facts{
		Source:       Endpoint{Broker: "eu", Queue: "orders"},
		Target:       Endpoint{Broker: "us", Queue: "orders.in"},
		SourceBroker: artemis.BrokerInfo{Version: "2.40.0", Name: "eu", NodeID: "node-eu", IDCacheSize: 20000, PersistIDCache: true},
		TargetBroker: artemis.BrokerInfo{Version: "2.40.0", Name: "us", NodeID: "node-us", IDCacheSize: 20000, PersistIDCache: true,
			PersistenceEnabled: true},
		SourceQueue: &artemis.QueueInfo{Name: "orders", Address: "orders", RoutingType: "ANYCAST", Durable: true,
			RingSize: -1, Enabled: true, MaxConsumers: -1, MessageCount: 120},
		TargetQueue: &artemis.QueueInfo{Name: "orders.in", Address: "orders.in", RoutingType: "ANYCAST", Durable: true,
			RingSize: -1, Enabled: true, MaxConsumers: -1, MessageCount: 5},
		TargetSettings: artemis.AddressSettings{AddressFullPolicy: "PAGE", MaxSizeBytes: -1, MaxSizeMessages: -1,
			PageLimitBytes: -1, PageLimitMessages: -1, DeadLetterAddress: "DLQ", ExpiryAddress: "ExpiryQueue",
			ExpiryDelay: -1, MinExpiryDelay: -1, MaxExpiryDelay: -1, MaxDeliveryAttempts: 10},
		TargetUsage:        &artemis.AddressUsage{SizeBytes: 4096, Messages: 5},
		SelectionKind:      selectFilter,
		SelectionCount:     42,
		InFlightWindow:     100,
		DuplicateDetection: DuplicateProbe{Outcome: DedupWorks},
		ExpiringMessages:   0,
		ExpiryPreserved:    true,
		ScheduledMessages:  0,
	}
}

// ruleCase edits the typical facts; want nil means the rule must say nothing.
type ruleCase struct {
	name string
	edit func(*Facts)
	want *expect
}

func refusal(attribute string, detail ...string) *expect {
	return &expect{severity: Error, attribute: attribute, detail: detail}
}

func warning(attribute string, detail ...string) *expect {
	return &expect{severity: Warning, attribute: attribute, detail: detail}
}

func withSummary(findings []Finding, summary string) []Finding {
	var out []Finding
	for _, f := range findings {
		if f.Summary == summary {
			out = append(out, f)
		}
	}
	return out
}

// checkRule runs each case and compares the findings with summary against its expectation.
func checkRule(t *testing.T, summary string, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := typical()
			if tc.edit != nil {
				tc.edit(&f)
			}
			got := withSummary(Check(f), summary)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("want no %q finding, got %+v", summary, got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one %q finding, got %d: %+v", summary, len(got), got)
			}
			assertFinding(t, got[0], *tc.want)
		})
	}
}

// broken has something wrong with almost every fact.
func broken() Facts {
	f := typical()
	zero := 0
	f.Target.Queue = f.Source.Queue
	f.TargetBroker.NodeID = f.SourceBroker.NodeID
	f.FilterError = "AMQ229020: Invalid filter"
	f.TargetQueue.Enabled = false
	f.TargetQueue.Filter = "a = 1"
	f.TargetQueue.LastValue = true
	f.TargetQueue.PurgeOnNoConsumers = true
	f.TargetQueue.Durable = false
	f.TargetQueue.AutoDelete = true
	f.TargetQueue.RingSize = 1
	f.TargetSettings.AutoDeleteQueuesMessageCount = -1
	f.TargetDiverts = []artemis.Divert{{Name: "d", Address: "orders", ForwardingAddress: "elsewhere", Exclusive: true}}
	f.TargetSettings.ExpiryAddress, f.TargetSettings.ExpiryDelay = "", 1000
	f.TargetBroker.PersistIDCache = false
	f.TargetSettings.AddressFullPolicy = "DROP"
	f.TargetSettings.IDCacheSize = &zero
	f.DuplicateDetection.Outcome = DedupDisabled
	f.PermissionProblems = []PermissionProblem{{Broker: "us", What: "send", Attribute: "target.queue"}}
	f.UnfinishedRun = &UnfinishedRun{RunID: "r1", Staged: 1, T0: time.Unix(0, 0)}
	f.SourceQueue.ConsumerCount = 1
	f.ScheduledMessages = 1
	f.ExpiringMessages, f.ExpiryPreserved = 1, false
	return f
}

// expect is the one finding a rule should give.
type expect struct {
	severity  Severity
	attribute string
	detail    []string // substrings the detail must hold: the values found
}

func assertFinding(t *testing.T, got Finding, want expect) {
	t.Helper()
	if got.Severity != want.severity {
		t.Errorf("severity %v, want %v", got.Severity, want.severity)
	}
	if got.Attribute != want.attribute {
		t.Errorf("attribute %q, want %q", got.Attribute, want.attribute)
	}
	for _, s := range want.detail {
		if !strings.Contains(got.Detail, s) {
			t.Errorf("detail does not mention %q:\n%s", s, got.Detail)
		}
	}
}
