package core_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Table tests of run identity: a run id names its spec and its t0. None of them needs a broker.

func TestNewRunID_RoundTripsThroughParseRunIDToTheSpecKeyAndT0(t *testing.T) {
	spec := transfertest.Spec()
	for _, t0 := range []time.Time{
		time.UnixMilli(0).UTC(),
		time.Date(2026, 12, 1, 5, 59, 17, 123_000_000, time.UTC),
		time.Date(2026, 12, 1, 6, 59, 17, 123_000_000, time.FixedZone("CET", 3600)), // the same instant
		time.Date(2099, 1, 1, 0, 0, 0, 1_000_000, time.UTC),
	} {
		id := core.NewRunID(spec, t0)
		key, got, err := core.ParseRunID(id)
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
	_, got, err := core.ParseRunID(core.NewRunID(transfertest.Spec(), t0))
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
		if id := core.NewRunID(transfertest.Spec(), t0); !valid.MatchString(id) {
			t.Errorf("NewRunID at %v = %q, want it to match %s", t0, id, valid)
		}
	}
}

func TestNewRunID_SameSpecSharesTheKeyAndOtherSpecsDoNot(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	base := transfertest.Spec()
	withAddresses := base
	withAddresses.Source.Address, withAddresses.Target.Address = "orders.addr", "orders.addr"
	keyOf := func(s core.Spec) string { k, _, _ := core.ParseRunID(core.NewRunID(s, t0)); return k }

	if keyOf(withAddresses) != keyOf(base) {
		t.Errorf("addresses changed the key: a run fills them in, so a resume of the same configuration would not find it")
	}
	if core.NewRunID(base, t0) == core.NewRunID(base, t0.Add(time.Millisecond)) {
		t.Errorf("two runs of one spec a millisecond apart share an id")
	}
	for name, change := range map[string]func(*core.Spec){
		"source broker": func(s *core.Spec) { s.Source.Broker = "dc3" },
		"source queue":  func(s *core.Spec) { s.Source.Queue = "invoices" },
		"target broker": func(s *core.Spec) { s.Target.Broker = "dc3" },
		"target queue":  func(s *core.Spec) { s.Target.Queue = "invoices" },
		"filter":        func(s *core.Spec) { s.Selection.Filter = "region = 'eu'" },
		"message ids":   func(s *core.Spec) { s.Selection.MessageIDs = []string{"ID:1"} },
		"direction":     func(s *core.Spec) { s.Source, s.Target = s.Target, s.Source },
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
			key, t0, err := core.ParseRunID(tt.id)
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
