package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// addressSettingKind is the Terraform type of an address setting.
type addressSettingKind int

const (
	settingString addressSettingKind = iota
	settingInt
	settingBool
)

// addressSetting maps one attribute of artemis_address_settings to the broker's key for it
// (the JSON shape of Artemis 2.32+, which addAddressSettings takes there) and to the value the
// broker's code uses when no entry sets it (2.32+ leaves such keys out of
// getAddressSettingsAsJSON).
type addressSetting struct {
	attribute string
	key       string
	kind      addressSettingKind
	// unset is the broker's default; nil where the default is not one value (the duplicate-id
	// cache falls back to the broker-wide id-cache-size).
	unset       any
	description string
}

// addressSettings are the attributes of artemis_address_settings, named as the artemis_queue
// data source's address_settings names them where it reads them.
var addressSettings = []addressSetting{
	{"address_full_policy", "addressFullMessagePolicy", settingString, "PAGE",
		"`PAGE`, `BLOCK`, `FAIL` or `DROP`: what happens to a message sent to a full address. `DROP` and `FAIL` lose or refuse messages."},
	{"max_size_bytes", "maxSizeBytes", settingInt, int64(-1),
		"Bytes in memory before the address is full; -1: only the broker-wide global-max-size applies."},
	{"max_size_messages", "maxSizeMessages", settingInt, int64(-1),
		"Messages in memory before the address is full; -1 for no limit. Artemis 2.32 or later."},
	{"page_size_bytes", "pageSizeBytes", settingInt, int64(10485760),
		"Size of each page file, in bytes. Artemis 2.31 refuses one that is not below a positive max_size_bytes."},
	{"page_limit_bytes", "pageLimitBytes", settingInt, int64(-1),
		"Bytes paged before page_full_policy applies; -1 for no limit. Artemis 2.32 or later."},
	{"page_limit_messages", "pageLimitMessages", settingInt, int64(-1),
		"Messages paged before page_full_policy applies; -1 for no limit. Artemis 2.32 or later."},
	{"page_full_policy", "pageFullMessagePolicy", settingString, "",
		"`FAIL`, `BLOCK` or `DROP` once a page limit is reached. Artemis 2.32 or later."},
	{"dead_letter_address", "deadLetterAddress", settingString, "",
		"Where messages go after max_delivery_attempts; empty: they are dropped."},
	{"expiry_address", "expiryAddress", settingString, "",
		"Where expired messages go; empty: they are dropped."},
	{"expiry_delay_ms", "expiryDelay", settingInt, int64(-1),
		"Milliseconds to live given to messages sent without an expiry; -1 for none."},
	{"min_expiry_delay_ms", "minExpiryDelay", settingInt, int64(-1),
		"Milliseconds: a shorter expiry is raised to this; -1 for none."},
	{"max_expiry_delay_ms", "maxExpiryDelay", settingInt, int64(-1),
		"Milliseconds: a longer expiry (or none) is cut to this; -1 for none."},
	{"redelivery_delay_ms", "redeliveryDelay", settingInt, int64(0),
		"Milliseconds before a message a consumer gave back is delivered again."},
	{"max_delivery_attempts", "maxDeliveryAttempts", settingInt, int64(10),
		"Deliveries before a message is sent to the dead-letter address (or dropped when there is none); -1 for never."},
	{"redistribution_delay_ms", "redistributionDelay", settingInt, int64(-1),
		"Milliseconds before messages move to other cluster nodes when the queue has no consumers; -1 for never."},
	{"duplicate_id_cache_size", "idCacheSize", settingInt, nil,
		"Size of the address's duplicate-id cache; reads back the broker-wide id-cache-size when no entry sets it. Artemis 2.32 or later."},
	{"send_to_dla_on_no_route", "sendToDLAOnNoRoute", settingBool, false,
		"Whether a message that no queue takes goes to the dead-letter address rather than being dropped."},
	{"auto_create_queues", "autoCreateQueues", settingBool, true, "Whether the broker creates a queue a client sends to or consumes from."},
	{"auto_create_addresses", "autoCreateAddresses", settingBool, true, "Whether the broker creates an address a client uses."},
	{"auto_delete_queues", "autoDeleteQueues", settingBool, true,
		"Whether the broker deletes the queues it auto-created once they are empty and without consumers."},
	{"auto_delete_addresses", "autoDeleteAddresses", settingBool, true,
		"Whether the broker deletes the addresses it auto-created once they have no queues."},
}

// addressSettingsPolicies are the values address_full_policy takes.
var addressSettingsPolicies = []string{"PAGE", "BLOCK", "FAIL", "DROP"}

// settingValue reads a setting from the broker's answer (either shape): the value under its key
// or, on brokers before 2.32, under the old key; ok false when neither is there.
func settingValue(s addressSetting, raw map[string]any, legacyKey string) (attr.Value, bool, error) {
	v, ok := raw[s.key]
	if !ok && legacyKey != "" {
		v, ok = raw[legacyKey]
	}
	if !ok || v == nil {
		return nil, false, nil
	}
	switch s.kind {
	case settingString:
		text, isText := v.(string)
		if !isText {
			return nil, false, fmt.Errorf("the broker reports %s as %v, not text", s.key, v)
		}
		return types.StringValue(text), true, nil
	case settingInt:
		n, isNumber := v.(float64)
		if !isNumber {
			return nil, false, fmt.Errorf("the broker reports %s as %v, not a number", s.key, v)
		}
		return types.Int64Value(int64(n)), true, nil
	default:
		b, isBool := v.(bool)
		if !isBool {
			return nil, false, fmt.Errorf("the broker reports %s as %v, not true or false", s.key, v)
		}
		return types.BoolValue(b), true, nil
	}
}

// unsetValue is the value a setting reads back as when no entry sets it; idCacheSize is the
// broker-wide cache size.
func unsetValue(s addressSetting, brokerIDCacheSize int) attr.Value {
	switch u := s.unset.(type) {
	case string:
		return types.StringValue(u)
	case int64:
		return types.Int64Value(u)
	case bool:
		return types.BoolValue(u)
	default:
		return types.Int64Value(int64(brokerIDCacheSize))
	}
}

// settingJSON is the value to send for an attribute's value.
func settingJSON(v attr.Value) any {
	switch t := v.(type) {
	case types.String:
		return t.ValueString()
	case types.Int64:
		return t.ValueInt64()
	case types.Bool:
		return t.ValueBool()
	}
	return nil
}

// rawSetting reads a number from the broker's address settings as it gave them, or unset when
// no entry sets it.
func rawSetting(raw map[string]any, key string, unset int64) int64 {
	if v, ok := raw[key].(float64); ok {
		return int64(v)
	}
	return unset
}
