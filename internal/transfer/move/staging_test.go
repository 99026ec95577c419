package move

import (
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Table tests of the staging settings and of their verification on the broker. None of them
// needs a broker.

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
