package artemis_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		schemes []string
		want    string // "" for a URL that passes
	}{
		{"http://127.0.0.1:8161/console/jolokia", []string{"http", "https"}, ""},
		{"HTTPS://broker.example/console/jolokia", []string{"http", "https"}, ""},
		{"amqps://broker.example:5671", []string{"amqp", "amqps"}, ""},
		{"127.0.0.1:5672", []string{"amqp", "amqps"}, `"127.0.0.1:5672" must start with amqp:// or amqps://`},
		{"tcp://127.0.0.1:8161/console/jolokia", []string{"http", "https"}, `"tcp://127.0.0.1:8161/console/jolokia" must start with http:// or https://`},
		{"http:///console/jolokia", []string{"http", "https"}, `"http:///console/jolokia" has no host`},
		{"amqp://:5672", []string{"amqp", "amqps"}, `"amqp://:5672" has no host`},
		{"amqp://admin:hunter2-secret@host:bad", []string{"amqp", "amqps"}, `"amqp://admin:***@host:bad" is not a URL (invalid port ":bad" after host)`},
		{"tcp://admin:hunter2-secret@host:61616", []string{"amqp", "amqps"}, `"tcp://admin:***@host:61616" must start with amqp:// or amqps://`},
	} {
		err := artemis.CheckURL(tc.raw, tc.schemes...)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckURL(%q):\n got %s\nwant %s", tc.raw, got, tc.want)
		}
	}
}

// Problems names the Config field (and the URL's index) of each problem, so that a caller can
// point at its own name for it; the text speaks of the endpoint.
func TestConfigProblems_NameFieldAndIndex(t *testing.T) {
	cfg := artemis.Config{
		Name:     "dc1",
		AMQPURLs: []string{"amqp://127.0.0.1:5672", "http://127.0.0.1:5672", "amqp://:5672"},
		Username: "transfer",
	}
	type problem struct {
		field    string
		index    int
		required bool
		text     string
	}
	want := []problem{
		{artemis.FieldManagementURL, 0, true, "management URL is required"},
		{artemis.FieldAMQPURLs, 1, false, `AMQP URL #2: "http://127.0.0.1:5672" must start with amqp:// or amqps://`},
		{artemis.FieldAMQPURLs, 2, false, `AMQP URL #3: "amqp://:5672" has no host`},
		{artemis.FieldPassword, 0, true, "password is required when a username is set"},
	}
	got := cfg.Problems()
	if len(got) != len(want) {
		t.Fatalf("got %d problems (%v), want %d", len(got), got, len(want))
	}
	for i, p := range got {
		g := problem{p.Field, p.Index, errors.Is(p, artemis.ErrRequired), p.Error()}
		if g != want[i] {
			t.Errorf("problem %d:\n got %+v\nwant %+v", i, g, want[i])
		}
	}
	err := cfg.Validate()
	var ce *artemis.ConfigError
	if !errors.As(err, &ce) || ce.Field != artemis.FieldManagementURL {
		t.Errorf("Validate: want the joined *ConfigErrors, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w.text) {
			t.Errorf("Validate's error %q lacks %q", err, w.text)
		}
	}
	if problems := (artemis.Config{Name: "dc1", ManagementURL: "https://h/console/jolokia", AMQPURLs: []string{"amqps://h"}}).Problems(); len(problems) != 0 {
		t.Errorf("a usable configuration has problems: %v", problems)
	}
}

func TestCheckClientKeyPair(t *testing.T) {
	cert, key := testenv.SelfSignedPEM(t)
	_, otherKey := testenv.SelfSignedPEM(t)
	for _, tc := range []struct {
		name      string
		cert, key string
		field     string // "" when the pair is usable
		required  bool
	}{
		{"no client certificate", "", "", "", false},
		{"a matching pair", cert, key, "", false},
		{"certificate without key", cert, "", artemis.FieldClientKeyPEM, true},
		{"key without certificate", "", key, artemis.FieldClientCertPEM, true},
		{"key of another certificate", cert, otherKey, artemis.FieldClientCertPEM, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := artemis.CheckClientKeyPair(tc.cert, tc.key)
			var ce *artemis.ConfigError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("want nil, got %v", err)
			case tc.field == "":
				return
			case !errors.As(err, &ce) || ce.Field != tc.field || errors.Is(err, artemis.ErrRequired) != tc.required:
				t.Fatalf("want a *ConfigError for %s (required %t), got %#v", tc.field, tc.required, err)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("the error quotes the key: %v", err)
			}
			// TLSOptions.Config refuses the same pairs with the same error.
			if _, cfgErr := (artemis.TLSOptions{ClientCertPEM: tc.cert, ClientKeyPEM: tc.key}).Config(); cfgErr == nil || cfgErr.Error() != err.Error() {
				t.Errorf("TLSOptions.Config: got %v, want %v", cfgErr, err)
			}
		})
	}
	if _, err := (artemis.TLSOptions{CAPEM: "not PEM"}).Config(); err == nil {
		t.Error("TLSOptions.Config accepted a CA that is not PEM")
	} else if ce := (*artemis.ConfigError)(nil); !errors.As(err, &ce) || ce.Field != artemis.FieldCAPEM {
		t.Errorf("want a *ConfigError for CAPEM, got %v", err)
	}
}
