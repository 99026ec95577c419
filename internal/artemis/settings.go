package artemis

import (
	"context"
	"encoding/json"
	"fmt"
)

// AddressSettings are the effective settings of an address: every matching entry of the broker's
// address-settings merged, with the broker's code defaults filled in where nothing is set.
type AddressSettings struct {
	AddressFullPolicy string // PAGE, DROP, FAIL or BLOCK
	MaxSizeBytes      int64  // -1: only the global limit applies
	MaxSizeMessages   int64  // -1: no limit (2.21+)
	PageLimitBytes    int64  // -1: no limit (2.28+)
	PageLimitMessages int64  // -1: no limit (2.28+)
	PageFullPolicy    string // empty, FAIL, DROP or BLOCK (2.28+)
	DeadLetterAddress string
	ExpiryAddress     string
	// ExpiryDelay (ms, -1 unset) gives a message that arrives without an expiry one; it wins
	// over the min and max delays.
	ExpiryDelay int64
	// MinExpiryDelay and MaxExpiryDelay (ms, -1 unset) raise a shorter expiry to the minimum
	// and cut a longer one to the maximum; either gives a message without an expiry one
	// (the maximum when it is set, else the minimum).
	MinExpiryDelay int64
	MaxExpiryDelay int64
	// NoExpiry (2.37+) makes messages never expire, whatever they carry and whatever the
	// delays above say.
	NoExpiry            bool
	MaxDeliveryAttempts int // <= 0: never dead-lettered by delivery count
	RedistributionDelay int64
	SendToDLAOnNoRoute  bool
	AutoCreateQueues    bool
	AutoCreateAddresses bool
	AutoDeleteQueues    bool
	// AutoDeleteQueuesMessageCount is how many messages an auto-delete queue may hold and still
	// be deleted once its last consumer has gone; -1 deletes it whatever it holds. A queue
	// takes it from the settings in force when it is created.
	AutoDeleteQueuesMessageCount int64
	AutoDeleteQueuesDelay        int64 // ms after the last consumer leaves
	AutoDeleteAddresses          bool
	DefaultRingSize              int64
	DefaultLastValueQueue        bool
	DefaultPurgeOnNoConsumers    bool
	// IDCacheSize is the address's own duplicate-id cache size (2.31+); nil means the broker's
	// global id-cache-size applies.
	IDCacheSize *int
	// Raw holds every key the broker returned, in the broker's own shape.
	Raw map[string]any
}

// defaultAddressSettings are the broker's code defaults (AddressSettings.java), which 2.32+
// leaves out of getAddressSettingsAsJSON.
func defaultAddressSettings() AddressSettings {
	return AddressSettings{
		AddressFullPolicy: "PAGE", MaxSizeBytes: -1, MaxSizeMessages: -1, PageLimitBytes: -1, PageLimitMessages: -1,
		ExpiryDelay: -1, MinExpiryDelay: -1, MaxExpiryDelay: -1, MaxDeliveryAttempts: 10, RedistributionDelay: -1,
		AutoCreateQueues: true, AutoCreateAddresses: true, AutoDeleteQueues: true, AutoDeleteAddresses: true,
		DefaultRingSize: -1,
	}
}

// parseAddressSettings reads both shapes of getAddressSettingsAsJSON: before 2.32 a fixed key set
// with defaults filled in and the dead-letter address under "DLA"; from 2.32 only the fields set
// somewhere, camelCase, the dead-letter address under "deadLetterAddress".
func parseAddressSettings(text string) (AddressSettings, error) {
	raw := map[string]any{}
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return AddressSettings{}, fmt.Errorf("decoding address settings: %w", err)
	}
	s := defaultAddressSettings()
	s.Raw = raw
	str := func(key string, target *string) {
		if v, ok := raw[key].(string); ok {
			*target = v
		}
	}
	num := func(key string, target *int64) {
		if v, ok := raw[key].(float64); ok {
			*target = int64(v)
		}
	}
	boolean := func(key string, target *bool) {
		if v, ok := raw[key].(bool); ok {
			*target = v
		}
	}
	str("addressFullMessagePolicy", &s.AddressFullPolicy)
	num("maxSizeBytes", &s.MaxSizeBytes)
	num("maxSizeMessages", &s.MaxSizeMessages)
	num("pageLimitBytes", &s.PageLimitBytes)
	num("pageLimitMessages", &s.PageLimitMessages)
	str("pageFullMessagePolicy", &s.PageFullPolicy)
	str("DLA", &s.DeadLetterAddress)
	str("deadLetterAddress", &s.DeadLetterAddress)
	str("expiryAddress", &s.ExpiryAddress)
	num("expiryDelay", &s.ExpiryDelay)
	num("minExpiryDelay", &s.MinExpiryDelay)
	num("maxExpiryDelay", &s.MaxExpiryDelay)
	boolean("noExpiry", &s.NoExpiry)
	attempts := int64(s.MaxDeliveryAttempts)
	num("maxDeliveryAttempts", &attempts)
	s.MaxDeliveryAttempts = int(attempts)
	num("redistributionDelay", &s.RedistributionDelay)
	boolean("sendToDLAOnNoRoute", &s.SendToDLAOnNoRoute)
	boolean("autoCreateQueues", &s.AutoCreateQueues)
	boolean("autoCreateAddresses", &s.AutoCreateAddresses)
	boolean("autoDeleteQueues", &s.AutoDeleteQueues)
	num("autoDeleteQueuesMessageCount", &s.AutoDeleteQueuesMessageCount)
	num("autoDeleteQueuesDelay", &s.AutoDeleteQueuesDelay)
	boolean("autoDeleteAddresses", &s.AutoDeleteAddresses)
	num("defaultRingSize", &s.DefaultRingSize)
	boolean("defaultLastValueQueue", &s.DefaultLastValueQueue)
	boolean("lastValueQueue", &s.DefaultLastValueQueue) // pre-2.32 name
	boolean("defaultPurgeOnNoConsumers", &s.DefaultPurgeOnNoConsumers)
	if v, ok := raw["idCacheSize"].(float64); ok {
		n := int(v)
		s.IDCacheSize = &n
	}
	return s, nil
}

// AddressSettings returns the effective settings for an address (a plain address name, not a
// match pattern).
func (c *Client) AddressSettings(ctx context.Context, address string) (AddressSettings, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return AddressSettings{}, err
	}
	raw, err := c.exec(ctx, brokerMBean(broker), "getAddressSettingsAsJSON(java.lang.String)", address)
	if err != nil {
		return AddressSettings{}, fmt.Errorf("reading address settings of %q: %w", address, err)
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return AddressSettings{}, fmt.Errorf("broker %q: address settings of %q: %w", c.cfg.Name, address, err)
	}
	s, err := parseAddressSettings(text)
	if err != nil {
		return AddressSettings{}, fmt.Errorf("broker %q: address settings of %q: %w", c.cfg.Name, address, err)
	}
	return s, nil
}

// AddAddressSettings adds (or replaces) the address-settings entry for match. settings use the
// JSON keys of Artemis 2.32+ (addressFullMessagePolicy, maxDeliveryAttempts, deadLetterAddress,
// ...). On older brokers, which only have positional forms that set every field, the fields not
// given are taken from the settings currently in effect for match, so nothing else changes.
func (c *Client) AddAddressSettings(ctx context.Context, match string, settings map[string]any) error {
	info, err := c.BrokerInfo(ctx)
	if err != nil {
		return err
	}
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if VersionAtLeast(info.Version, 2, 32) {
		raw, err := json.Marshal(settings)
		if err != nil {
			return fmt.Errorf("encoding address settings for %q: %w", match, err)
		}
		if _, err := c.exec(ctx, brokerMBean(broker), "addAddressSettings(java.lang.String,java.lang.String)", match, string(raw)); err != nil {
			return fmt.Errorf("adding address settings for %q: %w", match, err)
		}
		return nil
	}
	current, err := c.AddressSettings(ctx, match)
	if err != nil {
		return err
	}
	args, err := legacyAddressSettingsArgs(match, current.Raw, settings)
	if err != nil {
		return fmt.Errorf("broker %q (Artemis %s): address settings for %q: %w", c.cfg.Name, info.Version, match, err)
	}
	if _, err := c.exec(ctx, brokerMBean(broker), legacyAddAddressSettingsOp, args...); err != nil {
		return fmt.Errorf("adding address settings for %q: %w", match, err)
	}
	return nil
}

// RemoveAddressSettings removes the entry for match. Entries from broker.xml cannot be removed
// this way; the broker ignores those.
func (c *Client) RemoveAddressSettings(ctx context.Context, match string) error {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "removeAddressSettings(java.lang.String)", match); err != nil {
		return fmt.Errorf("removing address settings for %q: %w", match, err)
	}
	return nil
}
