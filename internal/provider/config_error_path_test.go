package provider

import (
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Every problem the client finds in a broker's configuration lands on the attribute it names.
func TestConfigErrorPath_MapsEveryFieldOfTheClient(t *testing.T) {
	for _, tc := range []struct {
		err  artemis.ConfigError
		want string
	}{
		{artemis.ConfigError{Field: artemis.FieldManagementURL}, `brokers["dc1"].management_url`},
		{artemis.ConfigError{Field: artemis.FieldAMQPURLs, Index: 2}, `brokers["dc1"].amqp_urls[2]`},
		{artemis.ConfigError{Field: artemis.FieldPassword}, `brokers["dc1"].password`},
		{artemis.ConfigError{Field: "Unknown"}, `brokers["dc1"]`},
	} {
		if got := configErrorPath("dc1", &tc.err).String(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.err.Field, got, tc.want)
		}
	}
	// Problems names only fields the mapping knows.
	cfg := artemis.Config{AMQPURLs: []string{"tcp://h"}, Username: "u"}
	for _, p := range cfg.Problems() {
		if configErrorPath("dc1", p).String() == `brokers["dc1"]` {
			t.Errorf("no attribute for %s", p.Field)
		}
	}
}
