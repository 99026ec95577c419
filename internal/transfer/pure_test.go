package transfer

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Table tests of the engine's pure decisions: run identity, selection filters, spec checks,
// staging settings and their verification, retry backoff and the recognition of a refused
// filter. None of them needs a broker.

func testSpec() Spec {
	return Spec{Mode: ModeMove, Source: Endpoint{Broker: "dc1", Queue: "orders"}, Target: Endpoint{Broker: "dc2", Queue: "orders"}}
}

func TestNewRunID_RoundTripsThroughParseRunIDToTheSpecKeyAndT0(t *testing.T) {
	spec := testSpec()
	for _, t0 := range []time.Time{
		time.UnixMilli(0).UTC(),
		time.Date(2026, 12, 1, 5, 59, 17, 123_000_000, time.UTC),
		time.Date(2026, 12, 1, 6, 59, 17, 123_000_000, time.FixedZone("CET", 3600)), // the same instant
		time.Date(2099, 1, 1, 0, 0, 0, 1_000_000, time.UTC),
	} {
		id := NewRunID(spec, t0)
		key, got, err := ParseRunID(id)
		if err != nil {
			t.Fatalf("ParseRunID(%q) of a NewRunID: %v", id, err)
		}
		if key != spec.Key() {
			t.Errorf("ParseRunID(%q) key = %q, want the spec key %q", id, key, spec.Key())
		}
		if !got.Equal(t0) || got.Location() != time.UTC {
			t.Errorf("ParseRunID(%q) t0 = %v, want %v in UTC", id, got, t0)
		}
	}
}

func TestNewRunID_KeepsT0ToTheMillisecondAsTheEngineTruncatesIt(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 5, 59, 17, 123_456_789, time.UTC)
	_, got, err := ParseRunID(NewRunID(testSpec(), t0))
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Truncate(time.Millisecond); !got.Equal(want) {
		t.Errorf("t0 = %v, want %v", got, want)
	}
}

func TestNewRunID_HoldsNoBrokerWildcardOrSeparatorCharacter(t *testing.T) {
	// Run ids name queues and address settings; '#', '*' and '.' are the broker's wildcard
	// syntax, and the staging prefix relies on nothing after it adding a '.'.
	valid := regexp.MustCompile(`^[0-9a-f]{12}-[0-9a-z]+$`)
	for _, t0 := range []time.Time{time.UnixMilli(0), time.UnixMilli(1), time.Now(), time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if id := NewRunID(testSpec(), t0); !valid.MatchString(id) {
			t.Errorf("NewRunID at %v = %q, want it to match %s", t0, id, valid)
		}
	}
}

func TestNewRunID_SameSpecSharesTheKeyAndOtherSpecsDoNot(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	base := testSpec()
	withAddresses := base
	withAddresses.Source.Address, withAddresses.Target.Address = "orders.addr", "orders.addr"
	keyOf := func(s Spec) string { k, _, _ := ParseRunID(NewRunID(s, t0)); return k }

	if keyOf(withAddresses) != keyOf(base) {
		t.Errorf("addresses changed the key: a run fills them in, so a resume of the same configuration would not find it")
	}
	if NewRunID(base, t0) == NewRunID(base, t0.Add(time.Millisecond)) {
		t.Errorf("two runs of one spec a millisecond apart share an id")
	}
	for name, change := range map[string]func(*Spec){
		"source broker": func(s *Spec) { s.Source.Broker = "dc3" },
		"source queue":  func(s *Spec) { s.Source.Queue = "invoices" },
		"target broker": func(s *Spec) { s.Target.Broker = "dc3" },
		"target queue":  func(s *Spec) { s.Target.Queue = "invoices" },
		"filter":        func(s *Spec) { s.Selection.Filter = "region = 'eu'" },
		"message ids":   func(s *Spec) { s.Selection.MessageIDs = []string{"ID:1"} },
		"direction":     func(s *Spec) { s.Source, s.Target = s.Target, s.Source },
	} {
		other := base
		change(&other)
		if keyOf(other) == keyOf(base) {
			t.Errorf("changing the %s kept the key %s", name, keyOf(base))
		}
	}
}

func TestParseRunID_RejectsWhatIsNotARunIDAndSaysWhatOneLooksLike(t *testing.T) {
	tests := []struct {
		name, id string
		want     string // in the error, besides the quoted id and "is not a run id"
	}{
		{"empty", "", "expected <12 hex digits>-<base-36 time>"},
		{"no dash", "0123456789ab", "expected <12 hex digits>-<base-36 time>"},
		{"key too short", "0123456789a-m4x9k2", "expected <12 hex digits>-<base-36 time>"},
		{"key too long", "0123456789abc-m4x9k2", "expected <12 hex digits>-<base-36 time>"},
		{"no time", "0123456789ab-", "expected <12 hex digits>-<base-36 time>"},
		{"key not hex", "0123456789xy-m4x9k2", "invalid byte"},
		{"time not base 36", "0123456789ab-m4_9k2", "invalid syntax"},
		{"a second dash", "0123456789ab-m4x-9k2", "invalid syntax"},
		{"time out of range", "0123456789ab-zzzzzzzzzzzzzz", "out of range"},
		// The preflight's canary queues live under the staging prefix too.
		{"a preflight canary", "canary-0123456789ab", "expected <12 hex digits>-<base-36 time>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, t0, err := ParseRunID(tt.id)
			if err == nil {
				t.Fatalf("ParseRunID(%q) = %q, %v; want an error", tt.id, key, t0)
			}
			msg := err.Error()
			if !strings.Contains(msg, strconv.Quote(tt.id)+" is not a run id") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q: want %q is not a run id ... %q", msg, tt.id, tt.want)
			}
			if key != "" || !t0.IsZero() {
				t.Errorf("ParseRunID(%q) returned %q, %v beside its error", tt.id, key, t0)
			}
		})
	}
}

func TestRunIDFromQueue_TakesOnlyStagingQueuesOfRuns(t *testing.T) {
	id := NewRunID(testSpec(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct{ queue, want string }{
		{StagingQueue(id), id},
		{ManifestQueue(id), ""},
		{QuarantineQueue(id), ""},
		{StagingPrefix + "canary-0123456789ab", ""},
		{StagingPrefix + "not-a-run", ""},
		{id, ""}, // a run id without the prefix is an ordinary queue name
		{"orders", ""},
	}
	for _, tt := range tests {
		if got := RunIDFromQueue(tt.queue); got != tt.want {
			t.Errorf("RunIDFromQueue(%q) = %q, want %q", tt.queue, got, tt.want)
		}
	}
}

func TestStageFilters_FreezeAFilterOrTheWholeQueueAtT0(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 5, 59, 17, 123_456_789, time.UTC)
	ms := strconv.FormatInt(t0.UnixMilli(), 10)
	tests := []struct {
		name   string
		filter string
		want   string
	}{
		{"whole queue", "", "AMQTimestamp <= " + ms},
		{"filter", "region = 'eu'", "(region = 'eu') AND AMQTimestamp <= " + ms},
		// Without the parentheses the freeze would bind to the last OR term only.
		{"filter with OR", "a = 1 OR b = 2", "(a = 1 OR b = 2) AND AMQTimestamp <= " + ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Selection{Filter: tt.filter}.StageFilters(t0)
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("StageFilters = %q, want [%q]", got, tt.want)
			}
		})
	}
}

func TestStageFilters_SelectIDsExactlyNormalisedQuotedAndNotFrozen(t *testing.T) {
	sel := Selection{MessageIDs: []string{"ID:a1", "b2", "it's"}}
	want := "AMQUserID IN ('ID:a1', 'ID:b2', 'ID:it''s')"
	for _, t0 := range []time.Time{{}, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)} {
		got := sel.StageFilters(t0)
		if len(got) != 1 || got[0] != want {
			t.Errorf("StageFilters(%v) = %q, want [%q]", t0, got, want)
		}
	}
}

func TestStageFilters_SplitIDsIntoFiltersOfAtMost200EachInOrder(t *testing.T) {
	for _, tt := range []struct{ ids, filters int }{{1, 1}, {199, 1}, {200, 1}, {201, 2}, {400, 2}, {401, 3}} {
		t.Run(fmt.Sprint(tt.ids), func(t *testing.T) {
			ids := make([]string, tt.ids)
			for i := range ids {
				ids[i] = fmt.Sprintf("ID:m%d", i)
			}
			filters := Selection{MessageIDs: ids}.StageFilters(time.Time{})
			if len(filters) != tt.filters {
				t.Fatalf("%d ids gave %d filters, want %d", tt.ids, len(filters), tt.filters)
			}
			var seen []string
			for _, f := range filters {
				inner, ok := strings.CutPrefix(f, "AMQUserID IN (")
				if !ok || !strings.HasSuffix(inner, ")") {
					t.Fatalf("filter %q is not an AMQUserID IN list", f)
				}
				quoted := strings.Split(strings.TrimSuffix(inner, ")"), ", ")
				if len(quoted) > idsPerFilter {
					t.Errorf("a filter lists %d ids, more than %d", len(quoted), idsPerFilter)
				}
				for _, q := range quoted {
					seen = append(seen, strings.Trim(q, "'"))
				}
			}
			if strings.Join(seen, ",") != strings.Join(ids, ",") {
				t.Errorf("the filters list %d ids, not each of the %d given once and in order", len(seen), len(ids))
			}
		})
	}
}

func TestSpecValidate_AcceptsWhatTheEngineCanRun(t *testing.T) {
	filtered := testSpec()
	filtered.Selection.Filter = "region = 'eu'"
	byIDs := testSpec()
	byIDs.Selection.MessageIDs = []string{"ID:1", "2"}
	sameBroker := testSpec()
	sameBroker.Target.Broker = sameBroker.Source.Broker
	sameBroker.Target.Queue = "orders.copy"
	copied := testSpec()
	copied.Mode = ModeCopy
	for name, s := range map[string]Spec{"whole queue": testSpec(), "filter": filtered, "message ids": byIDs, "copy": copied,
		"one broker, two queues": sameBroker} {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: Validate() = %v, want nil", name, err)
		}
	}
}

func TestSpecValidate_NamesTheFieldAtFaultAndWhatToDo(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Spec)
		want   string
	}{
		{"unknown mode", func(s *Spec) { s.Mode = "mirror" }, `mode "mirror" is not supported (use "move" or "copy")`},
		{"no mode", func(s *Spec) { s.Mode = "" }, `mode "" is not supported (use "move" or "copy")`},
		{"no source broker", func(s *Spec) { s.Source.Broker = "" }, "source.broker is required"},
		{"no source queue", func(s *Spec) { s.Source.Queue = "" }, "source.queue is required"},
		{"no target broker", func(s *Spec) { s.Target.Broker = "" }, "target.broker is required"},
		{"no target queue", func(s *Spec) { s.Target.Queue = "" }, "target.queue is required"},
		{"source is a staging queue", func(s *Spec) { s.Source.Queue = StagingPrefix + "0123456789ab-m4x9k2" },
			`source.queue "studio.transfer.0123456789ab-m4x9k2" is a staging queue of another run: adopt or return that run instead`},
		{"target is a staging queue", func(s *Spec) { s.Target.Queue = StagingPrefix + "x" },
			`target.queue "studio.transfer.x" is a staging queue of another run: adopt or return that run instead`},
		{"source is the target", func(s *Spec) { s.Target = s.Source }, "source and target are the same queue dc1/orders"},
		{"filter and ids", func(s *Spec) { s.Selection = Selection{Filter: "x = 1", MessageIDs: []string{"ID:1"}} },
			"selection: give filter or message_ids, not both"},
		{"blank id", func(s *Spec) { s.Selection.MessageIDs = []string{"ID:1", " \t"} }, "message_ids[1] is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSpec()
			tt.change(&s)
			err := s.Validate()
			if err == nil || err.Error() != tt.want {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSpecValidate_ReportsEveryProblemAtOnce(t *testing.T) {
	s := testSpec()
	s.Mode = "mirror"
	s.Target.Queue = ""
	s.Selection.MessageIDs = []string{"", "ID:2", ""}
	err := s.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	want := []string{`mode "mirror" is not supported (use "move" or "copy")`, "target.queue is required", "message_ids[0] is empty", "message_ids[2] is empty"}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Validate() reports %q, want %q", got, want)
	}
}

func TestIDSelector_SelectsEachSourceIDByAnORTerm(t *testing.T) {
	tests := []struct {
		ids  []int64
		want string
	}{
		{[]int64{42}, "_AMQ_ORIG_MESSAGE_ID = 42"},
		{[]int64{1, 2, 3}, "_AMQ_ORIG_MESSAGE_ID = 1 OR _AMQ_ORIG_MESSAGE_ID = 2 OR _AMQ_ORIG_MESSAGE_ID = 3"},
		{[]int64{0, math.MaxInt64}, "_AMQ_ORIG_MESSAGE_ID = 0 OR _AMQ_ORIG_MESSAGE_ID = 9223372036854775807"},
		// An empty selector selects every message: callers never pass an empty list.
		{nil, ""},
	}
	for _, tt := range tests {
		if got := idSelector(tt.ids); got != tt.want {
			t.Errorf("idSelector(%v) = %q, want %q", tt.ids, got, tt.want)
		}
	}
}

func TestIDSelector_OfAFullChunkHasOneTermPerID(t *testing.T) {
	ids := make([]int64, inFlightSelectorChunk)
	for i := range ids {
		ids[i] = int64(1000 + i)
	}
	if terms := strings.Split(idSelector(ids), " OR "); len(terms) != inFlightSelectorChunk {
		t.Errorf("%d ids gave %d terms", len(ids), len(terms))
	}
}

// stagingKeysSince232 are the settings that only the 2.32+ (JSON) form of addAddressSettings
// can set; older brokers keep what they have for them.
var stagingKeysSince232 = []string{"pageLimitBytes", "pageLimitMessages", "maxSizeMessages", "autoDeleteCreatedQueues"}

func TestStagingSettings_SetEverySettingThatCouldDropOrMoveAStagedMessage(t *testing.T) {
	want := map[string]any{
		"addressFullMessagePolicy":  "PAGE",
		"maxDeliveryAttempts":       -1,
		"expiryAddress":             "",
		"expiryDelay":               int64(-1),
		"minExpiryDelay":            int64(-1),
		"maxExpiryDelay":            int64(-1),
		"redistributionDelay":       int64(-1),
		"sendToDLAOnNoRoute":        false,
		"autoDeleteQueues":          false,
		"autoDeleteAddresses":       false,
		"defaultRingSize":           int64(-1),
		"defaultLastValueQueue":     false,
		"defaultPurgeOnNoConsumers": false,
		"maxSizeBytes":              int64(-1),
	}
	for _, version := range []string{"2.31.2", "2.32.0", "2.40.0"} {
		t.Run(version, func(t *testing.T) {
			s := stagingSettings(version, "studio.transfer.r1.quarantine")
			for k, v := range want {
				if got, ok := s[k]; !ok || got != v {
					t.Errorf("%s = %#v (set: %v), want %#v", k, got, ok, v)
				}
			}
			if got := s["deadLetterAddress"]; got != "studio.transfer.r1.quarantine" {
				t.Errorf("deadLetterAddress = %#v, want the run's quarantine", got)
			}
		})
	}
}

func TestStagingSettings_OfTheQuarantineHaveNoDeadLetterAddress(t *testing.T) {
	if got, ok := stagingSettings("2.40.0", "")["deadLetterAddress"]; !ok || got != "" {
		t.Errorf("deadLetterAddress = %#v (set: %v), want it set to empty", got, ok)
	}
}

func TestStagingSettings_LeaveOutWhatTheBrokerVersionCannotSet(t *testing.T) {
	tests := []struct {
		version string
		has     bool // the page limits, maxSizeMessages and autoDeleteCreatedQueues
	}{
		{"2.27.0", false},
		{"2.28.0", false}, // has page limits, but only the positional form, which cannot set them
		{"2.31.2", false},
		{"2.32.0", true},
		{"2.40.0", true},
		{"3.0.0", true},
	}
	for _, tt := range tests {
		s := stagingSettings(tt.version, "q")
		for _, k := range stagingKeysSince232 {
			v, ok := s[k]
			if ok != tt.has {
				t.Errorf("%s: %s set = %v, want %v", tt.version, k, ok, tt.has)
			}
			if ok && v != int64(-1) && v != false {
				t.Errorf("%s: %s = %#v, want no limit (-1) or false", tt.version, k, v)
			}
		}
	}
}

// safeStagingAddress is what a broker reports for a staging address whose settings are in effect.
func safeStagingAddress() artemis.AddressSettings {
	return artemis.AddressSettings{AddressFullPolicy: "PAGE", MaxDeliveryAttempts: -1, DeadLetterAddress: "studio.transfer.r1.quarantine",
		ExpiryDelay: -1, RedistributionDelay: -1, PageLimitBytes: -1, PageLimitMessages: -1}
}

func TestCheckStagingSettings_AcceptsTheSettingsStagingAsksFor(t *testing.T) {
	tests := map[string]func(*artemis.AddressSettings){
		"as asked":                         func(*artemis.AddressSettings) {},
		"max delivery attempts 0 is never": func(s *artemis.AddressSettings) { s.MaxDeliveryAttempts = 0 },
		"page limits without a page-full policy": func(s *artemis.AddressSettings) {
			s.PageLimitBytes, s.PageLimitMessages = 1<<20, 10
		},
		"a page-full policy without page limits": func(s *artemis.AddressSettings) { s.PageFullPolicy = "FAIL" },
	}
	for name, change := range tests {
		s := safeStagingAddress()
		change(&s)
		if err := checkStagingSettings(s, "studio.transfer.r1.quarantine"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckStagingSettings_RefusesAnOverrideThatCouldLoseAStagedMessage(t *testing.T) {
	tests := []struct {
		name   string
		change func(*artemis.AddressSettings)
		want   string
	}{
		{"drop when full", func(s *artemis.AddressSettings) { s.AddressFullPolicy = "DROP" }, "address-full-policy is DROP, not PAGE"},
		{"dead-letter by delivery count", func(s *artemis.AddressSettings) { s.MaxDeliveryAttempts = 1 }, "max-delivery-attempts is 1, not -1"},
		{"dead-letter elsewhere", func(s *artemis.AddressSettings) { s.DeadLetterAddress = "DLQ" },
			`dead-letter-address is "DLQ", not "studio.transfer.r1.quarantine"`},
		{"no dead-letter address", func(s *artemis.AddressSettings) { s.DeadLetterAddress = "" },
			`dead-letter-address is "", not "studio.transfer.r1.quarantine"`},
		{"expire elsewhere", func(s *artemis.AddressSettings) { s.ExpiryAddress = "ExpiryQueue" }, "expiry-address is ExpiryQueue"},
		{"expiry delay", func(s *artemis.AddressSettings) { s.ExpiryDelay = 1 }, "expiry-delay is 1"},
		{"redistribution at once", func(s *artemis.AddressSettings) { s.RedistributionDelay = 0 }, "redistribution-delay is 0, not -1"},
		{"page limit in bytes", func(s *artemis.AddressSettings) { s.PageFullPolicy, s.PageLimitBytes = "DROP", 1 },
			"a page limit applies with page-full-policy DROP"},
		{"page limit in messages", func(s *artemis.AddressSettings) { s.PageFullPolicy, s.PageLimitMessages = "FAIL", 1 },
			"a page limit applies with page-full-policy FAIL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := safeStagingAddress()
			tt.change(&s)
			err := checkStagingSettings(s, "studio.transfer.r1.quarantine")
			want := "the staging address settings are not in effect (" + tt.want + "); another address-settings entry may override them"
			if err == nil || err.Error() != want {
				t.Errorf("checkStagingSettings = %v, want %q", err, want)
			}
		})
	}
}

func TestCheckStagingSettings_ListsEveryProblemInOneError(t *testing.T) {
	s := safeStagingAddress()
	s.AddressFullPolicy, s.ExpiryAddress = "BLOCK", "ExpiryQueue"
	err := checkStagingSettings(s, "studio.transfer.r1.quarantine")
	if err == nil || !strings.Contains(err.Error(), "(address-full-policy is BLOCK, not PAGE; expiry-address is ExpiryQueue)") {
		t.Errorf("checkStagingSettings = %v, want both problems", err)
	}
}

func safeStagingQueue() artemis.QueueInfo {
	return artemis.QueueInfo{Name: "studio.transfer.r1", Address: "studio.transfer.r1", RoutingType: "ANYCAST", Durable: true,
		RingSize: -1, Enabled: true, MaxConsumers: 1}
}

func TestCheckStagingQueue_AcceptsADurableAnycastQueueThatKeepsEverything(t *testing.T) {
	if err := checkStagingQueue(safeStagingQueue()); err != nil {
		t.Error(err)
	}
	// Consumers and pausing hold messages back; they lose none.
	q := safeStagingQueue()
	q.ConsumerCount, q.Paused, q.Exclusive = 1, true, true
	if err := checkStagingQueue(q); err != nil {
		t.Error(err)
	}
}

func TestCheckStagingQueue_RefusesWhatCouldLoseAStagedMessage(t *testing.T) {
	tests := []struct {
		name   string
		change func(*artemis.QueueInfo)
		want   string
	}{
		{"multicast", func(q *artemis.QueueInfo) { q.RoutingType = "MULTICAST" }, "routing type MULTICAST"},
		{"not durable", func(q *artemis.QueueInfo) { q.Durable = false }, "not durable"},
		{"a ring", func(q *artemis.QueueInfo) { q.RingSize = 1 }, "ring size 1"},
		{"last value", func(q *artemis.QueueInfo) { q.LastValue = true }, "last-value"},
		{"purged without consumers", func(q *artemis.QueueInfo) { q.PurgeOnNoConsumers = true }, "purge-on-no-consumers"},
		{"auto-deleted", func(q *artemis.QueueInfo) { q.AutoDelete = true }, "auto-delete"},
		{"disabled", func(q *artemis.QueueInfo) { q.Enabled = false }, "disabled"},
		{"filtered", func(q *artemis.QueueInfo) { q.Filter = "x = 1" }, "filter x = 1"},
		{"several at once", func(q *artemis.QueueInfo) { q.Durable, q.AutoDelete = false, true }, "not durable, auto-delete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := safeStagingQueue()
			tt.change(&q)
			err := checkStagingQueue(q)
			if want := "staging queue studio.transfer.r1 is unsafe: " + tt.want; err == nil || err.Error() != want {
				t.Errorf("checkStagingQueue = %v, want %q", err, want)
			}
		})
	}
}

func TestBackoff_DoublesFrom250msUpToACapOf5s(t *testing.T) {
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{0, 250 * time.Millisecond},
		{1, 500 * time.Millisecond},
		{2, time.Second},
		{3, 2 * time.Second},
		{4, 4 * time.Second},
		{5, 5 * time.Second},
		{6, 5 * time.Second},
		{1000, 5 * time.Second},
		{math.MaxInt, 5 * time.Second}, // no overflow however long a wait lasts
	}
	for _, tt := range tests {
		if got := backoff(tt.attempt); got != tt.want {
			t.Errorf("backoff(%d) = %v, want %v", tt.attempt, got, tt.want)
		}
	}
}

func TestBackoff_NeverShrinks(t *testing.T) {
	for attempt := 1; attempt < 100; attempt++ {
		if backoff(attempt) < backoff(attempt-1) {
			t.Fatalf("backoff(%d) = %v < backoff(%d) = %v", attempt, backoff(attempt), attempt-1, backoff(attempt-1))
		}
	}
}

func TestFilterError_ReturnsTheBrokersWordsForARefusedFilter(t *testing.T) {
	// The broker's refusal is classified by internal/artemis; the engine takes its words.
	refused := &artemis.FilterError{Reason: "AMQ229020: Invalid filter: color = = 'x'"}
	msg, ok := filterError(fmt.Errorf("preflight of run r1: %w", refused))
	if !ok || msg != refused.Reason {
		t.Errorf("filterError = %q, %v; want %q, true", msg, ok, refused.Reason)
	}
}

func TestFilterError_LeavesOtherBrokerErrorsToTheCaller(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf(`broker "source": management endpoint http://127.0.0.1:8261 is unreachable: %w`, artemis.ErrUnreachable),
		fmt.Errorf(`broker "source": queue orders: %w`, artemis.ErrNotFound),
		errors.New(`broker "source": calling countMessages(java.lang.String): AMQ229017: Queue orders does not exist`),
		errors.New(`broker "source": user "viewer" lacks the right for countMessages`),
	} {
		if msg, ok := filterError(err); ok {
			t.Errorf("filterError(%q) = %q, true; want it left to the caller", err, msg)
		}
	}
}
