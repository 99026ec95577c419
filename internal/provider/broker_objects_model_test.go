package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

func settingByAttribute(t *testing.T, name string) addressSetting {
	t.Helper()
	for _, s := range addressSettings {
		if s.attribute == name {
			return s
		}
	}
	t.Fatalf("no address setting %s", name)
	return addressSetting{}
}

func TestSettingValue_ReadsBothShapesOfTheBrokersAnswer(t *testing.T) {
	tests := []struct {
		name, attribute string
		raw             map[string]any
		want            attr.Value
		found           bool
	}{
		{"2.32+ key", "dead_letter_address", map[string]any{"deadLetterAddress": "DLQ.x"}, types.StringValue("DLQ.x"), true},
		{"pre-2.32 key", "dead_letter_address", map[string]any{"DLA": "DLQ.y"}, types.StringValue("DLQ.y"), true},
		{"number", "max_size_bytes", map[string]any{"maxSizeBytes": float64(1048576)}, types.Int64Value(1048576), true},
		{"bool", "send_to_dla_on_no_route", map[string]any{"sendToDLAOnNoRoute": true}, types.BoolValue(true), true},
		{"left out: set nowhere (2.32+)", "expiry_delay_ms", map[string]any{}, nil, false},
		{"null", "expiry_address", map[string]any{"expiryAddress": nil}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := settingByAttribute(t, tt.attribute)
			legacyKey, _ := artemis.LegacyAddressSettingKey(s.key)
			got, found, err := settingValue(s, tt.raw, legacyKey)
			if err != nil {
				t.Fatal(err)
			}
			if found != tt.found || (found && !got.Equal(tt.want)) {
				t.Errorf("got %v (found %v), want %v (found %v)", got, found, tt.want, tt.found)
			}
		})
	}
}

func TestSettingValue_AValueOfTheWrongTypeNamesTheKey(t *testing.T) {
	_, _, err := settingValue(settingByAttribute(t, "max_size_bytes"), map[string]any{"maxSizeBytes": "10M"}, "")
	if err == nil || !strings.Contains(err.Error(), "maxSizeBytes") {
		t.Fatalf("want an error naming maxSizeBytes, got %v", err)
	}
}

func TestUnsetValue_IsTheBrokersDefaultAndTheBrokerWideCacheForDuplicateIDs(t *testing.T) {
	if got := unsetValue(settingByAttribute(t, "max_delivery_attempts"), 20000); !got.Equal(types.Int64Value(10)) {
		t.Errorf("max_delivery_attempts unset = %v, want 10", got)
	}
	if got := unsetValue(settingByAttribute(t, "address_full_policy"), 20000); !got.Equal(types.StringValue("PAGE")) {
		t.Errorf("address_full_policy unset = %v, want PAGE", got)
	}
	if got := unsetValue(settingByAttribute(t, "duplicate_id_cache_size"), 20000); !got.Equal(types.Int64Value(20000)) {
		t.Errorf("duplicate_id_cache_size unset = %v, want the broker-wide 20000", got)
	}
}

func TestLegacyAddressSettingKey_OnlyWhatThePositionalFormTakes(t *testing.T) {
	for _, s := range addressSettings {
		_, ok := artemis.LegacyAddressSettingKey(s.key)
		needs232 := strings.Contains(s.description, "2.32 or later")
		if ok == needs232 {
			t.Errorf("%s: settable before 2.32 = %v, but its description says 2.32 or later = %v", s.attribute, ok, needs232)
		}
	}
}

func TestQueueModel_LastValueKeyNeedsLastValue(t *testing.T) {
	m := queueResourceModel{LastValueKey: types.StringValue("sku"), LastValue: types.BoolValue(false)}
	if diags := m.validate(); !diags.HasError() {
		t.Fatal("a key without last_value = true passed")
	}
	m.LastValue = types.BoolValue(true)
	if diags := m.validate(); diags.HasError() {
		t.Fatalf("a key with last_value = true was refused: %v", diags)
	}
	m.LastValue = types.BoolUnknown()
	if diags := m.validate(); diags.HasError() {
		t.Fatalf("an unknown last_value was refused before it is known: %v", diags)
	}
}

func TestQueueModel_ReadsALastValueKeyAsALastValueQueueOnEveryVersion(t *testing.T) {
	var m queueResourceModel
	m.fromBroker(artemis.QueueInfo{Name: "q", LastValue: false, LastValueKey: "sku", MaxConsumers: -1, RingSize: -1})
	if !m.LastValue.ValueBool() {
		t.Fatal("a queue with a last-value key read back as last_value = false")
	}
}

func TestQueueModel_UnappliedNamesEachAttributeTheBrokerDidNotChange(t *testing.T) {
	want := queueResourceModel{Filter: types.StringValue("a = 1"), MaxConsumers: types.Int64Value(2), Exclusive: types.BoolValue(true),
		PurgeOnNoConsumers: types.BoolValue(false), RingSize: types.Int64Value(-1), Enabled: types.BoolValue(true)}
	got := want
	got.MaxConsumers = types.Int64Value(-1)
	diags := want.unapplied(got)
	if diags.ErrorsCount() != 1 || !strings.Contains(diags[0].Summary(), "max_consumers") {
		t.Fatalf("want one error on max_consumers, got %v", diags)
	}
	if diags := want.unapplied(want); diags.HasError() {
		t.Fatalf("an update the broker applied was reported: %v", diags)
	}
}
