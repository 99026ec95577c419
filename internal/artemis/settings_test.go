package artemis

import "testing"

// The two shapes below are getAddressSettingsAsJSON answers of the test brokers (trimmed):
// 2.31.2 lists every key with its value or default; 2.40.0 lists only the keys set somewhere.
const (
	settings231 = `{"DLA":"DLQ","expiryAddress":"","expiryDelay":-1,"minExpiryDelay":300,"maxExpiryDelay":600,` +
		`"maxDeliveryAttempts":10,"maxSizeBytes":-1,"addressFullMessagePolicy":"PAGE","autoDeleteQueues":true,` +
		`"autoDeleteQueuesDelay":250,"autoDeleteQueuesMessageCount":-1,"defaultLastValueKey":"","defaultRingSize":-1}`
	settings240 = `{"addressFullMessagePolicy":"PAGE","maxSizeBytes":-1,"deadLetterAddress":"DLQ","expiryAddress":"ExpiryQueue",` +
		`"expiryDelay":100,"noExpiry":true,"autoCreateQueues":true,"autoDeleteQueues":false,"managementBrowsePageSize":200}`
	settings240Defaults = `{"addressFullMessagePolicy":"PAGE","deadLetterAddress":"DLQ","expiryAddress":"ExpiryQueue"}`
)

func TestParseAddressSettings_ExpiryAndAutoDeleteKeysInBothShapes(t *testing.T) {
	cases := []struct {
		name, text                       string
		expiry, minExpiry, maxExpiry     int64
		noExpiry, autoDelete             bool
		autoDeleteCount, autoDeleteDelay int64
		expiryAddress                    string
	}{
		{name: "2.31 fixed key set", text: settings231, expiry: -1, minExpiry: 300, maxExpiry: 600,
			autoDelete: true, autoDeleteCount: -1, autoDeleteDelay: 250},
		{name: "2.40 only what is set", text: settings240, expiry: 100, minExpiry: -1, maxExpiry: -1, noExpiry: true,
			expiryAddress: "ExpiryQueue"},
		// Absent keys take the broker's code defaults: no delay, auto-delete only when empty.
		{name: "2.40 nothing about expiry", text: settings240Defaults, expiry: -1, minExpiry: -1, maxExpiry: -1,
			autoDelete: true, expiryAddress: "ExpiryQueue"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseAddressSettings(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if s.ExpiryDelay != tc.expiry || s.MinExpiryDelay != tc.minExpiry || s.MaxExpiryDelay != tc.maxExpiry {
				t.Errorf("expiry delays %d/%d/%d, want %d/%d/%d", s.ExpiryDelay, s.MinExpiryDelay, s.MaxExpiryDelay,
					tc.expiry, tc.minExpiry, tc.maxExpiry)
			}
			if s.NoExpiry != tc.noExpiry || s.ExpiryAddress != tc.expiryAddress {
				t.Errorf("no-expiry %v, expiry address %q; want %v, %q", s.NoExpiry, s.ExpiryAddress, tc.noExpiry, tc.expiryAddress)
			}
			if s.AutoDeleteQueues != tc.autoDelete || s.AutoDeleteQueuesMessageCount != tc.autoDeleteCount ||
				s.AutoDeleteQueuesDelay != tc.autoDeleteDelay {
				t.Errorf("auto-delete %v, message count %d, delay %d; want %v, %d, %d", s.AutoDeleteQueues,
					s.AutoDeleteQueuesMessageCount, s.AutoDeleteQueuesDelay, tc.autoDelete, tc.autoDeleteCount, tc.autoDeleteDelay)
			}
		})
	}
}

func TestAddressMatches(t *testing.T) {
	cases := []struct {
		pattern, address string
		want             bool
	}{
		{"orders", "orders", true},
		{"orders", "orders.in", false},
		{"orders.#", "orders", true},
		{"orders.#", "orders.in.eu", true},
		{"orders.*", "orders.in", true},
		{"orders.*", "orders", false},
		{"orders.*", "orders.in.eu", false},
		{"#", "anything.at.all", true},
		{"*.in", "orders.in", true},
		{"*.in", "orders.out", false},
		{"orders.#.eu", "orders.eu", true},
		{"orders.#.eu", "orders.in.x.eu", true},
		{"orders.#.eu", "orders.in.us", false},
	}
	for _, tc := range cases {
		if got := addressMatches(tc.pattern, tc.address); got != tc.want {
			t.Errorf("addressMatches(%q, %q) = %v, want %v", tc.pattern, tc.address, got, tc.want)
		}
	}
}
