package preflight

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// noted is a finding the provider logs rather than warns of: it asks nothing of a reviewer.
func noted(attribute string, detail ...string) *expect {
	return &expect{severity: Note, attribute: attribute, detail: detail}
}

func TestCheck_RefusesMissingSourceQueue(t *testing.T) {
	checkRule(t, summarySourceMissing, []ruleCase{
		{name: "missing", edit: func(f *Facts) { f.SourceQueue = nil }, want: refusal("source.queue", `"orders"`, `"eu"`)},
		{name: "present"},
	})
}

func TestCheck_RefusesMissingTargetQueue(t *testing.T) {
	checkRule(t, summaryTargetMissing, []ruleCase{
		{name: "missing", edit: func(f *Facts) { f.TargetQueue = nil }, want: refusal("target.queue", `"orders.in"`, `"us"`, "Create the queue")},
		{name: "present"},
	})
}

func TestCheck_SkipsTargetQueueRulesWhenTheTargetQueueIsMissing(t *testing.T) {
	f := typical()
	f.TargetQueue = nil
	f.TargetSettings.AddressFullPolicy = "DROP"
	f.TargetBroker.IDCacheSize = 0
	var errs []string
	for _, finding := range Check(f) {
		if finding.Severity == Error {
			errs = append(errs, finding.Summary)
		}
	}
	if want := []string{summaryTargetMissing}; !reflect.DeepEqual(errs, want) {
		t.Errorf("errors %q, want only %q: the address of a missing queue is unknown", errs, want)
	}
}

func TestCheck_RefusesTargetThatIsTheSourceQueue(t *testing.T) {
	sameName := func(f *Facts) { f.Target.Queue = f.Source.Queue }
	checkRule(t, summarySameQueue, []ruleCase{
		{name: "same node, same queue", edit: func(f *Facts) { sameName(f); f.TargetBroker.NodeID = "node-eu" },
			want: refusal("target.queue", `"orders"`, `"node-eu"`)},
		{name: "same configured broker, node ids unread", edit: func(f *Facts) {
			sameName(f)
			f.Target.Broker = f.Source.Broker
			f.SourceBroker.NodeID, f.TargetBroker.NodeID = "", ""
		}, want: refusal("target.queue", `"orders"`)},
		{name: "same node, another queue", edit: func(f *Facts) { f.TargetBroker.NodeID = "node-eu" }},
		{name: "another node, same queue name", edit: sameName},
		{name: "node ids unread on two configured brokers", edit: func(f *Facts) {
			sameName(f)
			f.SourceBroker.NodeID, f.TargetBroker.NodeID = "", ""
		}},
	})
}

func TestCheck_RefusesFilterTheBrokerRejects(t *testing.T) {
	msg := "AMQ229020: Invalid filter: region = "
	checkRule(t, summaryFilterInvalid, []ruleCase{
		{name: "rejected", edit: func(f *Facts) { f.FilterError = msg; f.SelectionCount = -1 },
			want: refusal("filter", msg, `"eu"`)},
		{name: "valid"},
	})
}

func TestCheck_RefusesDisabledTarget(t *testing.T) {
	checkRule(t, summaryTargetDisabled, []ruleCase{
		{name: "disabled", edit: func(f *Facts) { f.TargetQueue.Enabled = false },
			want: refusal("target.queue", `"orders.in"`, "enabled=false", "orders.in::orders.in")},
		{name: "enabled"},
	})
}

func TestCheck_RefusesFilteredTargetQueue(t *testing.T) {
	checkRule(t, summaryTargetFiltered, []ruleCase{
		{name: "filter discards", edit: func(f *Facts) { f.TargetQueue.Filter = "region = 'us'" },
			want: refusal("target.queue", `"region = 'us'"`, "orders.in::orders.in", "discards it", "accepted")},
		{name: "filter dead-letters", edit: func(f *Facts) {
			f.TargetQueue.Filter = "region = 'us'"
			f.TargetSettings.SendToDLAOnNoRoute = true
		}, want: refusal("target.queue", `dead-letter address "DLQ"`)},
		{name: "no filter"},
	})
}

func TestCheck_RefusesLastValueTarget(t *testing.T) {
	checkRule(t, summaryTargetLastValue, []ruleCase{
		{name: "last-value flag", edit: func(f *Facts) { f.TargetQueue.LastValue = true },
			want: refusal("target.queue", `"orders.in"`, "last-value=true", `property "_AMQ_LVQ_NAME"`)},
		// Artemis 2.40 reports last-value=false for a queue created with only a key, and
		// replaces messages in it all the same.
		{name: "last-value key alone", edit: func(f *Facts) { f.TargetQueue.LastValueKey = "k" },
			want: refusal("target.queue", `"orders.in"`, `last-value-key "k"`, "last-value=false", `property "k"`)},
		{name: "flag and key, as 2.31 reports it", edit: func(f *Facts) { f.TargetQueue.LastValue, f.TargetQueue.LastValueKey = true, "k" },
			want: refusal("target.queue", `last-value-key "k"`, "last-value=true")},
		{name: "ordinary"},
	})
}

func TestCheck_RefusesNonDurableTarget(t *testing.T) {
	checkRule(t, summaryTargetNotDurable, []ruleCase{
		{name: "not durable", edit: func(f *Facts) { f.TargetQueue.Durable = false },
			want: refusal("target.queue", `"orders.in"`, "durable=false", "restarts")},
		{name: "durable"},
	})
}

func TestCheck_RefusesAutoDeleteTargetThatIsDeletedWithItsMessages(t *testing.T) {
	autoDelete := func(count int64) func(*Facts) {
		return func(f *Facts) {
			f.TargetQueue.AutoDelete = true
			f.TargetSettings.AutoDeleteQueuesMessageCount, f.TargetSettings.AutoDeleteQueuesDelay = count, 500
		}
	}
	checkRule(t, summaryTargetAutoDeleted, []ruleCase{
		{name: "auto-delete whatever it holds", edit: autoDelete(-1),
			want: refusal("target.queue", `"orders.in"`, "auto-delete-queues-message-count -1", "500 ms", "auto-delete=false")},
		// Deleted only when empty: a later send re-creates it or fails, and nothing is lost.
		{name: "auto-delete when empty", edit: autoDelete(0)},
		{name: "created explicitly", edit: func(f *Facts) { autoDelete(-1)(f); f.TargetQueue.AutoDelete = false }},
	})
}

func TestCheck_RefusesTargetAddressWithAnExclusiveDivert(t *testing.T) {
	divert := func(exclusive bool, filter string) func(*Facts) {
		return func(f *Facts) {
			f.TargetDiverts = []artemis.Divert{{Name: "audit", Address: "orders.#", ForwardingAddress: "orders.audit",
				Exclusive: exclusive, Filter: filter}}
		}
	}
	checkRule(t, summaryTargetDiverted, []ruleCase{
		{name: "exclusive", edit: divert(true, ""),
			want: refusal("target.queue", `divert "audit" (on "orders.#")`, `address "orders.audit"`, "every message",
				"orders.in::orders.in", "non-exclusive")},
		{name: "exclusive with a filter", edit: divert(true, "region = 'eu'"),
			want: refusal("target.queue", `filter "region = 'eu'"`)},
		{name: "non-exclusive copies", edit: divert(false, "")},
		{name: "no target queue", edit: func(f *Facts) { divert(true, "")(f); f.TargetQueue = nil }},
		{name: "no divert"},
	})
}

func TestCheck_RefusesTargetThatGivesAnExpiryWithoutAnExpiryAddress(t *testing.T) {
	delays := func(expiry, least, most int64) func(*Facts) {
		return func(f *Facts) {
			f.TargetSettings.ExpiryAddress = ""
			f.TargetSettings.ExpiryDelay, f.TargetSettings.MinExpiryDelay, f.TargetSettings.MaxExpiryDelay = expiry, least, most
		}
	}
	checkRule(t, summaryTargetExpires, []ruleCase{
		{name: "expiry-delay", edit: delays(300, -1, -1),
			want: refusal("target.queue", `Address "orders.in"`, "expiry-delay 300 ms", "no expiry-address",
				"deletes", "Set an expiry-address", "or remove expiry-delay 300 ms")},
		{name: "expiry-delay 0 expires on arrival", edit: delays(0, -1, -1), want: refusal("target.queue", "expiry-delay 0 ms")},
		{name: "min-expiry-delay alone", edit: delays(-1, 300, -1),
			want: refusal("target.queue", "min-expiry-delay 300 ms", "within the min and max delays")},
		{name: "max-expiry-delay alone", edit: delays(-1, -1, 600), want: refusal("target.queue", "max-expiry-delay 600 ms")},
		{name: "min and max", edit: delays(-1, 300, 600), want: refusal("target.queue", "min-expiry-delay 300 ms, max-expiry-delay 600 ms")},
		{name: "no-expiry wins over the delays", edit: func(f *Facts) { delays(300, 300, 600)(f); f.TargetSettings.NoExpiry = true }},
		{name: "with an expiry address", edit: func(f *Facts) { delays(300, -1, -1)(f); f.TargetSettings.ExpiryAddress = "ExpiryQueue" }},
		{name: "no delays, no expiry address", edit: delays(-1, -1, -1)},
		{name: "no target queue", edit: func(f *Facts) { delays(300, -1, -1)(f); f.TargetQueue = nil }},
	})
}

func TestCheck_WarnsThatTheTargetGivesAnExpiryKeptByItsExpiryAddress(t *testing.T) {
	checkRule(t, summaryTargetGivesExpiry, []ruleCase{
		{name: "expiry-delay", edit: func(f *Facts) { f.TargetSettings.ExpiryDelay = 300 },
			want: warning("target.queue", "expiry-delay 300 ms", `expiry address "ExpiryQueue"`, "unless a queue is bound")},
		{name: "without an expiry address it is an error", edit: func(f *Facts) {
			f.TargetSettings.ExpiryDelay, f.TargetSettings.ExpiryAddress = 300, ""
		}},
		{name: "no delays"},
	})
}

func TestCheck_RefusesTargetBrokerWithoutPersistence(t *testing.T) {
	checkRule(t, summaryNotPersistent, []ruleCase{
		{name: "persistence disabled", edit: func(f *Facts) { f.TargetBroker.PersistenceEnabled = false },
			want: refusal("target.broker", `"us"`, "persistence-enabled=false", "<persistence-enabled>true</persistence-enabled>")},
		{name: "source without persistence is not this rule", edit: func(f *Facts) { f.SourceBroker.PersistenceEnabled = false }},
		{name: "persistent"},
	})
}

func TestCheck_RefusesTargetBrokerThatForgetsDuplicateIDsOnRestart(t *testing.T) {
	checkRule(t, summaryIDCacheForgotten, []ruleCase{
		{name: "persist-id-cache false", edit: func(f *Facts) { f.TargetBroker.PersistIDCache = false },
			want: refusal("target.broker", `"us"`, "persist-id-cache=false", "stores it twice", "<persist-id-cache>true</persist-id-cache>")},
		// Without persistence the broker forgets messages too; that refusal says it.
		{name: "persistence disabled as well", edit: func(f *Facts) {
			f.TargetBroker.PersistIDCache, f.TargetBroker.PersistenceEnabled = false, false
		}},
		{name: "source broker does not matter", edit: func(f *Facts) { f.SourceBroker.PersistIDCache = false }},
		{name: "persisted"},
	})
}

func TestCheck_RefusesPurgeOnNoConsumersTarget(t *testing.T) {
	checkRule(t, summaryTargetPurges, []ruleCase{
		{name: "purging, no consumers", edit: func(f *Facts) { f.TargetQueue.PurgeOnNoConsumers = true },
			want: refusal("target.queue", `"orders.in"`, "0 consumer(s)")},
		{name: "purging, consumers attached now", edit: func(f *Facts) {
			f.TargetQueue.PurgeOnNoConsumers = true
			f.TargetQueue.ConsumerCount = 3
		}, want: refusal("target.queue", "3 consumer(s)")},
		{name: "not purging"},
	})
}

func TestCheck_RefusesRingTargetThatCannotHoldTheSelection(t *testing.T) {
	ring := func(size int64) func(*Facts) { return func(f *Facts) { f.TargetQueue.RingSize = size } }
	checkRule(t, summaryRingTooSmall, []ruleCase{
		{name: "not a ring", edit: func(f *Facts) { f.SelectionCount = -1 }},
		{name: "ring with room", edit: ring(1000)},
		{name: "exact fit", edit: ring(47)},
		{name: "one too many", edit: ring(46),
			want: refusal("target.queue", "size 46", "holding 5", "42 selected", "would make 47", "1 more", "at least 47")},
		{name: "ring of size 0", edit: ring(0), want: refusal("target.queue", "size 0")},
		{name: "count unknown", edit: func(f *Facts) { ring(1000)(f); f.SelectionCount = -1 },
			want: refusal("target.queue", "unknown", "cannot prove")},
		{name: "capped count that fits as far as known", edit: func(f *Facts) {
			ring(1000)(f)
			f.SelectionCount, f.SelectionCountCapped = 200, true
		}, want: refusal("target.queue", "at least 200", "cannot prove")},
		{name: "capped count that already overflows", edit: func(f *Facts) {
			ring(100)(f)
			f.SelectionCount, f.SelectionCountCapped = 200, true
		}, want: refusal("target.queue", "at least 200 selected", "at least 105 more")},
	})
}

func TestCheck_RefusesDropPolicyTarget(t *testing.T) {
	policy := func(p string) func(*Facts) { return func(f *Facts) { f.TargetSettings.AddressFullPolicy = p } }
	checkRule(t, summaryDropWhenFull, []ruleCase{
		{name: "DROP, not full now", edit: policy("DROP"),
			want: refusal("target.queue", "DROP", `"orders.in"`, `"us"`, "global-max-size", "4096 bytes", "silently drops")},
		{name: "DROP with a limit of its own", edit: func(f *Facts) {
			policy("DROP")(f)
			f.TargetSettings.MaxSizeBytes, f.TargetUsage.LimitPercent = 10<<20, 40
		}, want: refusal("target.queue", "max-size-bytes 10485760", "40% full now")},
		{name: "drop in lower case, usage unknown", edit: func(f *Facts) { policy("drop")(f); f.TargetUsage = nil },
			want: refusal("target.queue", "usage now is unknown")},
		{name: "PAGE", edit: policy("PAGE")},
		{name: "BLOCK", edit: policy("BLOCK")},
		{name: "FAIL", edit: policy("FAIL")},
	})
}

func TestCheck_RefusesPageFullDropTarget(t *testing.T) {
	paging := func(policy string, bytes, messages int64) func(*Facts) {
		return func(f *Facts) {
			f.TargetSettings.PageFullPolicy = policy
			f.TargetSettings.PageLimitBytes, f.TargetSettings.PageLimitMessages = bytes, messages
		}
	}
	checkRule(t, summaryDropWhenPageFull, []ruleCase{
		{name: "byte limit, DROP", edit: paging("DROP", 1<<30, -1),
			want: refusal("target.queue", "page-limit-bytes 1073741824", "page-full-policy DROP")},
		{name: "message limit, DROP", edit: paging("DROP", -1, 50000),
			want: refusal("target.queue", "page-limit-messages 50000")},
		{name: "no page limit, DROP", edit: paging("DROP", -1, -1)},
		{name: "byte limit, FAIL", edit: paging("FAIL", 1<<30, -1)},
		{name: "byte limit, DROP, but the address blocks before paging", edit: func(f *Facts) {
			paging("DROP", 1<<30, -1)(f)
			f.TargetSettings.AddressFullPolicy = "BLOCK"
		}},
	})
}

func TestCheck_AcceptsMulticastTargetSilently(t *testing.T) {
	f := typical()
	f.TargetQueue.RoutingType = "MULTICAST"
	if got, want := Check(f), Check(typical()); !reflect.DeepEqual(got, want) {
		t.Errorf("a MULTICAST target changed the findings:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestCheck_RefusesDisabledDuplicateIDCache(t *testing.T) {
	zero, some := 0, 20000
	checkRule(t, summaryIDCacheOff, []ruleCase{
		{name: "broker cache 0", edit: func(f *Facts) { f.TargetBroker.IDCacheSize = 0 },
			want: refusal("target.broker", "the broker's id-cache-size is 0", "at least 400")},
		{name: "address cache 0 over a broker cache", edit: func(f *Facts) { f.TargetSettings.IDCacheSize = &zero },
			want: refusal("target.queue", `id-cache-size of address "orders.in" is 0`)},
		{name: "address cache over a broker cache of 0", edit: func(f *Facts) {
			f.TargetBroker.IDCacheSize = 0
			f.TargetSettings.IDCacheSize = &some
		}},
		{name: "broker cache 0, no batch size known", edit: func(f *Facts) {
			f.TargetBroker.IDCacheSize, f.InFlightWindow = 0, 0
		}, want: refusal("target.broker", "a positive value")},
		{name: "broker default"},
	})
}

func TestCheck_RefusesIDCacheSmallerThanFourTimesTheBatch(t *testing.T) {
	small := 100
	checkRule(t, summaryIDCacheSmall, []ruleCase{
		{name: "broker cache 300, batch 100", edit: func(f *Facts) { f.TargetBroker.IDCacheSize = 300 },
			want: refusal("batch_size", "last 300", "200 messages", "batch_size 100", "at most 75", "at least 400")},
		{name: "address cache 100, batch 100", edit: func(f *Facts) { f.TargetSettings.IDCacheSize = &small },
			want: refusal("batch_size", `id-cache-size of address "orders.in"`, "at most 25")},
		{name: "broker cache exactly four times the batch", edit: func(f *Facts) { f.TargetBroker.IDCacheSize = 400 }},
		{name: "no batch size known", edit: func(f *Facts) { f.TargetBroker.IDCacheSize, f.InFlightWindow = 150, 0 }},
	})
}

func TestCheck_RefusesIDCacheSharedWithTransfersSendingToTheQueueNow(t *testing.T) {
	checkRule(t, summaryIDCacheShared, []ruleCase{
		{name: "cache 1000, batch 100, two runs of 100 sending", edit: func(f *Facts) {
			f.TargetBroker.IDCacheSize = 1000
			f.TargetRelays = []TargetRelay{{RunID: "r1", Batch: 100}, {RunID: "r2", Batch: 100}}
		}, want: refusal("batch_size", "last 1000", "runs r1 and r2 send to it now", "up to 600 messages", "wait for runs r1 and r2", "at least 1200")},
		{name: "cache 800, batch 100, one run of 100 sending", edit: func(f *Facts) {
			f.TargetBroker.IDCacheSize = 800
			f.TargetRelays = []TargetRelay{{RunID: "r1", Batch: 100}}
		}},
		{name: "cache 400, batch 100, nothing else sending", edit: func(f *Facts) { f.TargetBroker.IDCacheSize = 400 }},
	})
}

func TestCheck_RefusesTargetThatStoresDuplicateAMQPMessages(t *testing.T) {
	checkRule(t, summaryDedupDisabled, []ruleCase{
		{name: "canary stored twice", edit: func(f *Facts) {
			f.DuplicateDetection = DuplicateProbe{Outcome: DedupDisabled, Detail: "2 copies of canary c1 on orders.in"}
		}, want: refusal("target.broker", `"us"`, "2 copies of canary c1", "amqpDuplicateDetection=false")},
		{name: "canary discarded"},
	})
}

func TestCheck_RefusesTargetThatDiscardsWhatTheRelaySends(t *testing.T) {
	checkRule(t, summaryRelayDiscarded, []ruleCase{
		{name: "canary stored neither copy", edit: func(f *Facts) {
			f.DuplicateDetection = DuplicateProbe{Outcome: DedupDiscarded, Routing: "MULTICAST", Detail: "canary queue c1 holds neither of the two copies"}
		}, want: refusal("target.queue", `"us"`, "routing type MULTICAST", "holds neither", "Nothing moved")},
		{name: "canary stored once"},
		{name: "canary stored twice is the other refusal", edit: func(f *Facts) { f.DuplicateDetection.Outcome = DedupDisabled }},
	})
}

func TestCheck_WarnsWhenDuplicateDetectionIsUnverified(t *testing.T) {
	checkRule(t, summaryDedupUnknown, []ruleCase{
		{name: "no answer", edit: func(f *Facts) {
			f.DuplicateDetection = DuplicateProbe{Outcome: DedupUnknown, Detail: "canary timed out after 5s"}
		}, want: warning("target.broker", "canary timed out after 5s")},
		{name: "works"},
		{name: "disabled is an error, not this warning", edit: func(f *Facts) { f.DuplicateDetection.Outcome = DedupDisabled }},
	})
}

func TestCheck_RefusesEachPermissionProblem(t *testing.T) {
	f := typical()
	f.PermissionProblems = []PermissionProblem{
		{Broker: "us", What: "send to orders.in::orders.in", Attribute: "target.queue", Detail: "AMQ229032: User admin does not have permission='SEND'"},
		{Broker: "eu", What: "manage the broker", Attribute: "source.broker", Detail: "HTTP 403"},
	}
	got := withSummary(Check(f), summaryPermission)
	if len(got) != 2 {
		t.Fatalf("want one finding per problem, got %+v", got)
	}
	assertFinding(t, got[0], *refusal("target.queue", `"us"`, "send to orders.in::orders.in", "permission='SEND'"))
	assertFinding(t, got[1], *refusal("source.broker", `"eu"`, "manage the broker", "HTTP 403"))

	if got := withSummary(Check(typical()), summaryPermission); len(got) != 0 {
		t.Errorf("no problems gave %+v", got)
	}
}

func TestCheck_WarnsOfTheSelectionSize(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*Facts)
		summary string
		want    *expect
	}{
		{name: "filter", summary: "42 messages are selected now",
			want: noted("filter", "42 messages", `"orders"`, "live count")},
		{name: "capped filter", edit: func(f *Facts) { f.SelectionCount, f.SelectionCountCapped = 200, true },
			summary: "At least 200 messages are selected now", want: noted("filter", "management-browse-page-size", "live count")},
		{name: "whole queue", edit: func(f *Facts) { f.SelectionKind, f.SelectionCount = selectWholeQueue, 120 },
			summary: "120 messages are selected now", want: noted("", "120 messages")},
		{name: "message ids", edit: func(f *Facts) { f.SelectionKind, f.SelectionCount = selectMessageIDs, 3 },
			summary: "3 of the listed message ids are selected now", want: noted("message_ids", "3 of the listed", "live count")},
		// The broker counts the ids among the head of a deep queue only: more may be there.
		{name: "capped message ids", edit: func(f *Facts) {
			f.SelectionKind, f.SelectionCount, f.SelectionCountCapped = selectMessageIDs, 3, true
		}, summary: "At least 3 of the listed message ids are selected now", want: noted("message_ids", "management-browse-page-size", "live count")},
		{name: "message id list too long to count", edit: func(f *Facts) {
			f.SelectionKind, f.SelectionCount, f.SelectionCountUpperBound = selectMessageIDs, 2500, true
		}, summary: "Up to 2500 of the listed message ids are selected now", want: noted("message_ids", "too long to count", "live count")},
		{name: "nothing selected", edit: func(f *Facts) { f.SelectionCount = 0 },
			summary: "0 messages are selected now", want: warning("filter", "0 messages")},
		{name: "no listed id selected", edit: func(f *Facts) { f.SelectionKind, f.SelectionCount = selectMessageIDs, 0 },
			summary: "0 of the listed message ids are selected now", want: warning("message_ids", "0 of the listed")},
		// An empty queue moved whole leaves nothing to check: a migration's empty queues do not
		// each warn.
		{name: "empty queue moved whole", edit: func(f *Facts) { f.SelectionKind, f.SelectionCount = selectWholeQueue, 0 },
			summary: "0 messages are selected now", want: noted("", "0 messages", "live count")},
		{name: "unknown", edit: func(f *Facts) { f.SelectionCount = -1 },
			summary: summarySelectionUnknown, want: warning("filter", "could not count")},
		{name: "no source queue", edit: func(f *Facts) { f.SourceQueue = nil }, summary: "42 messages are selected now"},
		{name: "filter rejected", edit: func(f *Facts) { f.FilterError = "bad"; f.SelectionCount = -1 }, summary: summarySelectionUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := typical()
			if tc.edit != nil {
				tc.edit(&f)
			}
			got := withSummary(Check(f), tc.summary)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("want no %q finding, got %+v", tc.summary, got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one %q finding, got %+v", tc.summary, Check(f))
			}
			assertFinding(t, got[0], *tc.want)
		})
	}
}

func TestCheck_WarnsOfAnUnfinishedRun(t *testing.T) {
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 8_000_000, time.UTC)
	checkRule(t, summaryUnfinishedRun, []ruleCase{
		{name: "unfinished", edit: func(f *Facts) {
			f.UnfinishedRun = &UnfinishedRun{RunID: "k3y-m7q2x1", Staged: 17, T0: t0}
		}, want: warning("", "Run k3y-m7q2x1", "17 messages staged since 2025-03-04T05:06:07.008Z", "resumes it with the same start time")},
		{name: "none"},
	})
}

func TestCheck_NotesThatFilterAndWholeQueueSelectionsAreFrozenAtStart(t *testing.T) {
	kind := func(k string) func(*Facts) { return func(f *Facts) { f.SelectionKind = k } }
	checkRule(t, summarySelectionFrozen, []ruleCase{
		{name: "filter", want: noted("filter", "A filter selection", "AMQTimestamp", "t0", "creation-time", "always included")},
		{name: "whole queue", edit: kind(selectWholeQueue), want: noted("", "A whole-queue selection", "clock")},
		{name: "kind unset means whole queue", edit: kind(""), want: noted("", "A whole-queue selection")},
		{name: "message ids are exact", edit: kind(selectMessageIDs)},
	})
}

func TestCheck_NotesThatMessagesArriveInTheirAMQPForm(t *testing.T) {
	checkRule(t, summaryAMQPForm, []ruleCase{
		{name: "always", want: noted("", "AMQP 1.0", "Core, OpenWire, STOMP or MQTT", "JMS message type")},
	})
}

func TestCheck_WarnsOfExpiryLostInStaging(t *testing.T) {
	checkRule(t, summaryExpiryLost, []ruleCase{
		{name: "expiry not carried over", edit: func(f *Facts) { f.ExpiringMessages, f.ExpiryPreserved = 7, false },
			want: warning("filter", "7 selected message(s)", "will not expire")},
		{name: "expiry carried over", edit: func(f *Facts) { f.ExpiringMessages = 7 }},
		{name: "none expiring", edit: func(f *Facts) { f.ExpiryPreserved = false }},
		{name: "unknown", edit: func(f *Facts) { f.ExpiringMessages, f.ExpiryPreserved = -1, false }},
	})
}

func TestCheck_WarnsThatExpiredMessagesAreDroppedOnATargetWithoutExpiryAddress(t *testing.T) {
	checkRule(t, summaryExpiryDropped, []ruleCase{
		{name: "expiring, no expiry address", edit: func(f *Facts) { f.ExpiringMessages, f.TargetSettings.ExpiryAddress = 3, "" },
			want: warning("target.queue", "3 selected message(s)", `Address "orders.in"`, "no expiry-address", "deletes")},
		{name: "expiring, with an expiry address", edit: func(f *Facts) { f.ExpiringMessages, f.TargetSettings.ExpiryAddress = 3, "ExpiryQueue" }},
		{name: "expiry not carried over", edit: func(f *Facts) { f.ExpiringMessages, f.ExpiryPreserved = 3, false }},
		{name: "none expiring"},
		{name: "unknown", edit: func(f *Facts) { f.ExpiringMessages = -1 }},
		{name: "no target queue", edit: func(f *Facts) { f.ExpiringMessages, f.TargetQueue = 3, nil }},
	})
}

func TestCheck_WarnsOfScheduledMessages(t *testing.T) {
	checkRule(t, summaryScheduledIncluded, []ruleCase{
		{name: "scheduled", edit: func(f *Facts) { f.ScheduledMessages = 4 },
			want: warning("source.queue", "4 scheduled message(s)", "apply waits")},
		{name: "none"},
		{name: "unknown", edit: func(f *Facts) { f.ScheduledMessages = -1 }},
	})
}

func TestCheck_WarnsWhenABlockOrFailTargetIsNearlyFull(t *testing.T) {
	full := func(policy string, pct int) func(*Facts) {
		return func(f *Facts) {
			f.TargetSettings.AddressFullPolicy = policy
			f.TargetSettings.MaxSizeBytes = 10 << 20
			f.TargetUsage.LimitPercent = pct
		}
	}
	checkRule(t, summaryTargetNearlyFull, []ruleCase{
		{name: "BLOCK at 90%", edit: full("BLOCK", 90),
			want: warning("target.queue", "90% full", "BLOCK", "max-size-bytes 10485760")},
		{name: "FAIL at 100%", edit: full("FAIL", 100), want: warning("target.queue", "FAIL")},
		{name: "BLOCK at 89%", edit: full("BLOCK", 89)},
		{name: "PAGE at 99%", edit: full("PAGE", 99)},
		{name: "usage unknown", edit: func(f *Facts) { full("BLOCK", 95)(f); f.TargetUsage = nil }},
	})
}

func TestCheck_WarnsOfConsumersOnTheSource(t *testing.T) {
	checkRule(t, summarySourceConsumers, []ruleCase{
		{name: "consumers", edit: func(f *Facts) { f.SourceQueue.ConsumerCount, f.SourceQueue.DeliveringCount = 2, 9 },
			want: warning("source.queue", "2 consumer(s)", "9 message(s) in delivery", "skipped")},
		{name: "no consumers"},
	})
}

func TestCheck_TypicalConfigurationHasNoErrorsNorWarningsOnlyNotes(t *testing.T) {
	type line struct {
		severity           Severity
		attribute, summary string
	}
	var got []line
	findings := Check(typical())
	for _, f := range findings {
		got = append(got, line{f.Severity, f.Attribute, f.Summary})
	}
	want := []line{
		{Note, "filter", "42 messages are selected now"},
		{Note, "filter", summarySelectionFrozen},
		{Note, "", summaryAMQPForm},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings\n got %+v\nwant %+v", got, want)
	}
	if HasErrors(findings) {
		t.Error("HasErrors is true for a typical configuration")
	}
}

func TestCheck_ListsErrorsThenWarningsThenNotesInAFixedOrder(t *testing.T) {
	findings := Check(broken())
	var summaries []string
	for i, f := range findings {
		summaries = append(summaries, f.Summary)
		if i > 0 && findings[i-1].Severity > f.Severity {
			t.Errorf("%s %q follows a %s", f.Severity, f.Summary, findings[i-1].Severity)
		}
	}
	want := []string{
		summarySameQueue, summaryFilterInvalid, summaryTargetDisabled, summaryTargetFiltered, summaryTargetLastValue,
		summaryTargetPurges, summaryTargetNotDurable, summaryTargetAutoDeleted, summaryRingTooSmall, summaryDropWhenFull,
		summaryTargetDiverted, summaryTargetExpires, summaryIDCacheOff, summaryIDCacheForgotten, summaryDedupDisabled,
		summaryPermission,
		summaryUnfinishedRun, summarySourceConsumers, summaryScheduledIncluded, summaryExpiryLost,
		summarySelectionFrozen, summaryAMQPForm, // notes, after the warnings
	}
	if !reflect.DeepEqual(summaries, want) {
		t.Errorf("order\n got %q\nwant %q", summaries, want)
	}
	if again := Check(broken()); !reflect.DeepEqual(again, findings) {
		t.Error("the same facts gave different findings")
	}
}

func TestCheck_EveryFindingHasASummaryAndACompleteDetail(t *testing.T) {
	f := broken()
	f.SourceQueue = nil
	all := append(Check(f), Check(broken())...)
	for _, finding := range all {
		if finding.Summary == "" || strings.HasSuffix(finding.Summary, ".") {
			t.Errorf("summary %q: want a short line without a final period", finding.Summary)
		}
		if !strings.HasSuffix(finding.Detail, ".") || strings.Contains(finding.Detail, "%!") {
			t.Errorf("%s: detail is not a finished sentence: %q", finding.Summary, finding.Detail)
		}
	}
}

func TestHasErrors(t *testing.T) {
	cases := []struct {
		name     string
		findings []Finding
		want     bool
	}{
		{"none", nil, false},
		{"warnings only", []Finding{{Severity: Warning}, {Severity: Warning}}, false},
		{"an error among warnings", []Finding{{Severity: Warning}, {Severity: Error}}, true},
		{"zero value refuses", []Finding{{}}, true},
	}
	for _, tc := range cases {
		if got := HasErrors(tc.findings); got != tc.want {
			t.Errorf("%s: HasErrors = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSeverity_String(t *testing.T) {
	if Error.String() != "error" || Warning.String() != "warning" {
		t.Errorf("got %q and %q", Error, Warning)
	}
}
