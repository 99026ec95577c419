package provider

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// ---------------------------------------------------------------------------------------------
// Unit tests: configuration parsing and validation, no Terraform CLI, no broker.

func TestBrokerEnvName_UpperCasesAndReplacesOtherCharacters(t *testing.T) {
	for name, want := range map[string]string{
		"dc1":        "ARTEMIS_DC1_PASSWORD",
		"eu-west.1":  "ARTEMIS_EU_WEST_1_PASSWORD",
		"Source_Old": "ARTEMIS_SOURCE_OLD_PASSWORD",
	} {
		if got := brokerEnvName(name, "PASSWORD"); got != want {
			t.Errorf("brokerEnvName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestResolveSettings_ConfigErrorsNameTheAttributeAndTheFix(t *testing.T) {
	caPEM, keyPEM := testenv.SelfSignedPEM(t)
	tests := []struct {
		name     string
		in       providerSettings
		env      map[string]string
		files    map[string]string
		wantPath string   // path of the first error
		want     []string // substrings of the first error
	}{
		{
			name:     "no brokers and no ARTEMIS_BROKERS",
			in:       providerSettings{},
			wantPath: `brokers`,
			want:     []string{"No brokers configured", "ARTEMIS_BROKERS"},
		},
		{
			name:     "ARTEMIS_PLAN_SENDS_CANARIES neither true nor false",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL}),
			env:      map[string]string{"ARTEMIS_PLAN_SENDS_CANARIES": "yes"},
			wantPath: `plan_sends_canaries`,
			want:     []string{"Invalid ARTEMIS_PLAN_SENDS_CANARIES", `"yes"`, "true or false"},
		},
		{
			name:     "empty brokers map",
			in:       providerSettings{Brokers: map[string]brokerSettings{}},
			wantPath: `brokers`,
			want:     []string{"No brokers configured", "is empty"},
		},
		{
			name:     "management URL with the wrong scheme",
			in:       oneBroker(brokerSettings{ManagementURL: "tcp://127.0.0.1:8161/console/jolokia"}),
			wantPath: `brokers["dc1"].management_url`,
			want:     []string{"Invalid management URL", "must start with http:// or https://", "console/jolokia"},
		},
		{
			name:     "management URL without host",
			in:       oneBroker(brokerSettings{ManagementURL: "http:///console/jolokia"}),
			wantPath: `brokers["dc1"].management_url`,
			want:     []string{"has no host"},
		},
		{
			name:     "management URL missing",
			in:       oneBroker(brokerSettings{AMQPURLs: []string{"amqp://127.0.0.1:5672"}}),
			wantPath: `brokers["dc1"].management_url`,
			want:     []string{"Missing management URL", "Jolokia endpoint"},
		},
		{
			name:     "AMQP URL with the wrong scheme",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, AMQPURLs: []string{"amqp://127.0.0.1:5672", "http://127.0.0.1:5672"}}),
			wantPath: `brokers["dc1"].amqp_urls[1]`,
			want:     []string{"Invalid AMQP URL", "must start with amqp:// or amqps://"},
		},
		{
			name:     "management origin without scheme",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, ManagementOrigin: "127.0.0.1"}),
			wantPath: `brokers["dc1"].management_origin`,
			want:     []string{"Invalid management origin"},
		},
		{
			name:     "username without password",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, Username: "transfer"}),
			wantPath: `brokers["dc1"].password`,
			want:     []string{"Missing password", "ARTEMIS_DC1_PASSWORD"},
		},
		{
			name:     "password from the environment without username",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL}),
			env:      map[string]string{"ARTEMIS_DC1_PASSWORD": "s3cret"},
			wantPath: `brokers["dc1"].username`,
			want:     []string{"Missing username", "takes its password from ARTEMIS_DC1_PASSWORD", "ARTEMIS_DC1_USERNAME"},
		},
		{
			name:     "invalid broker name",
			in:       providerSettings{Brokers: map[string]brokerSettings{"dc 1": {ManagementURL: testMgmtURL}}},
			wantPath: `brokers["dc 1"]`,
			want:     []string{"Invalid broker name"},
		},
		{
			name:     "connect timeout without unit",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, ConnectTimeout: "10"}),
			wantPath: `brokers["dc1"].connect_timeout`,
			want:     []string{"Invalid duration", `"10s"`},
		},
		{
			name:     "negative request timeout",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, RequestTimeout: "-5s"}),
			wantPath: `brokers["dc1"].request_timeout`,
			want:     []string{"must be positive"},
		},
		{
			name:     "CA given both inline and as a file",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, TLS: &tlsSettings{CACertPEM: caPEM, CACertFile: "/etc/ca.pem"}}),
			files:    map[string]string{"/etc/ca.pem": caPEM},
			wantPath: `brokers["dc1"].tls.ca_cert_file`,
			want:     []string{"Conflicting TLS settings", "tls.ca_cert_pem", "Set only one"},
		},
		{
			name:     "client key given both inline and as a file",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, TLS: &tlsSettings{ClientCertPEM: caPEM, ClientKeyPEM: keyPEM, ClientKeyFile: "/k.pem"}}),
			wantPath: `brokers["dc1"].tls.client_key_file`,
			want:     []string{"Conflicting TLS settings"},
		},
		{
			name:     "CA file that cannot be read",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, TLS: &tlsSettings{CACertFile: "/nonexistent/ca.pem"}}),
			wantPath: `brokers["dc1"].tls.ca_cert_file`,
			want:     []string{"Cannot read TLS file", "/nonexistent/ca.pem", "tls.ca_cert_pem instead"},
		},
		{
			name:     "CA file that is empty",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, TLS: &tlsSettings{CACertFile: "/empty.pem"}}),
			files:    map[string]string{"/empty.pem": "\n"},
			wantPath: `brokers["dc1"].tls.ca_cert_file`,
			want:     []string{"Empty TLS file"},
		},
		{
			name:     "CA text that is not PEM",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, TLS: &tlsSettings{CACertPEM: "not a certificate"}}),
			wantPath: `brokers["dc1"].tls.ca_cert_pem`,
			want:     []string{"Invalid CA certificate", "BEGIN CERTIFICATE"},
		},
		{
			name:     "client certificate without key",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, TLS: &tlsSettings{ClientCertFile: "/c.pem"}}),
			files:    map[string]string{"/c.pem": caPEM},
			wantPath: `brokers["dc1"].tls.client_key_pem`,
			want:     []string{"Missing client key", "tls.client_cert_file"},
		},
		{
			name:     "client key without certificate",
			in:       oneBroker(brokerSettings{ManagementURL: testMgmtURL, TLS: &tlsSettings{ClientKeyPEM: keyPEM}}),
			wantPath: `brokers["dc1"].tls.client_cert_pem`,
			want:     []string{"Missing client certificate"},
		},
		{
			name:     "ARTEMIS_BROKERS that is not JSON",
			in:       providerSettings{},
			env:      map[string]string{"ARTEMIS_BROKERS": "dc1=http://x"},
			wantPath: ``,
			want:     []string{"Invalid ARTEMIS_BROKERS", "JSON object"},
		},
		{
			name:     "ARTEMIS_BROKERS with a misspelt attribute",
			in:       providerSettings{},
			env:      map[string]string{"ARTEMIS_BROKERS": `{"dc1": {"mgmt_url": "http://x"}}`},
			wantPath: ``,
			want:     []string{"Invalid ARTEMIS_BROKERS", `unknown field "mgmt_url"`},
		},
		{
			name:     "ARTEMIS_BROKERS with a bad URL names the variable and the attribute",
			in:       providerSettings{},
			env:      map[string]string{"ARTEMIS_BROKERS": `{"dc1": {"management_url": "ftp://x"}}`},
			wantPath: ``,
			want:     []string{"Invalid management URL", `In ARTEMIS_BROKERS, brokers["dc1"].management_url`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := resolveSettings(tt.in, fakeEnv(tt.env), fakeFiles(tt.files))
			errs := diags.Errors()
			if len(errs) == 0 {
				t.Fatalf("no error; diagnostics: %v", diags)
			}
			first := errs[0]
			gotPath := ""
			if wp, ok := first.(diag.DiagnosticWithPath); ok {
				gotPath = wp.Path().String()
			}
			if gotPath != tt.wantPath {
				t.Errorf("error path = %q, want %q (%s)", gotPath, tt.wantPath, diagText(first))
			}
			for _, w := range tt.want {
				if !strings.Contains(diagText(first), w) {
					t.Errorf("error %q does not mention %q", diagText(first), w)
				}
			}
		})
	}
}

func TestResolveSettings_ValidConfigsBuildBrokers(t *testing.T) {
	caPEM, keyPEM := testenv.SelfSignedPEM(t)
	tests := []struct {
		name  string
		in    providerSettings
		env   map[string]string
		files map[string]string
		check func(t *testing.T, set *providerRuntime)
	}{
		{
			name: "minimal broker gets the engine defaults",
			in:   oneBroker(brokerSettings{ManagementURL: testMgmtURL + "/"}),
			check: func(t *testing.T, set *providerRuntime) {
				cfg := set.configs["dc1"]
				if cfg.ManagementURL != testMgmtURL {
					t.Errorf("ManagementURL = %q, want the trailing slash trimmed", cfg.ManagementURL)
				}
				if cfg.ConnectTimeout != 0 || cfg.RequestTimeout != 0 || cfg.TLS != nil {
					t.Errorf("defaults not left to the engine: %+v", cfg)
				}
			},
		},
		{
			name: "every attribute set",
			in: oneBroker(brokerSettings{
				AMQPURLs: []string{"amqp://127.0.0.1:5672", "amqps://127.0.0.1:5671"}, ManagementURL: testMgmtURL,
				ManagementOrigin: "http://127.0.0.1", Username: "transfer", Password: "pw", BrokerName: "dc1-broker",
				ConnectTimeout: "3s", RequestTimeout: "1m30s",
				TLS: &tlsSettings{CACertFile: "/ca.pem", ClientCertPEM: caPEM, ClientKeyFile: "/key.pem", ServerName: "broker.local"},
			}),
			files: map[string]string{"/ca.pem": caPEM, "/key.pem": keyPEM},
			check: func(t *testing.T, set *providerRuntime) {
				cfg := set.configs["dc1"]
				if len(cfg.AMQPURLs) != 2 || cfg.Username != "transfer" || cfg.Password != "pw" || cfg.BrokerName != "dc1-broker" ||
					cfg.ManagementOrigin != "http://127.0.0.1" || cfg.ConnectTimeout != 3*time.Second || cfg.RequestTimeout != 90*time.Second {
					t.Errorf("config not carried over: %+v", cfg)
				}
				if cfg.TLS == nil || cfg.TLS.RootCAs == nil || len(cfg.TLS.Certificates) != 1 || cfg.TLS.ServerName != "broker.local" || cfg.TLS.InsecureSkipVerify {
					t.Errorf("TLS not built from the files: %+v", cfg.TLS)
				}
			},
		},
		{
			name: "password from ARTEMIS_<NAME>_PASSWORD fills a missing one",
			in:   providerSettings{Brokers: map[string]brokerSettings{"eu-west": {ManagementURL: testMgmtURL, Username: "transfer"}}},
			env:  map[string]string{"ARTEMIS_EU_WEST_PASSWORD": "from-env"},
			check: func(t *testing.T, set *providerRuntime) {
				if got := set.configs["eu-west"].Password; got != "from-env" {
					t.Errorf("Password = %q, want the environment's", got)
				}
			},
		},
		{
			name: "username and password both from the environment",
			in:   oneBroker(brokerSettings{ManagementURL: testMgmtURL}),
			env:  map[string]string{"ARTEMIS_DC1_USERNAME": "env-user", "ARTEMIS_DC1_PASSWORD": "env-pw"},
			check: func(t *testing.T, set *providerRuntime) {
				if cfg := set.configs["dc1"]; cfg.Username != "env-user" || cfg.Password != "env-pw" {
					t.Errorf("credentials = %q/%q, want the environment's", cfg.Username, cfg.Password)
				}
			},
		},
		{
			name: "config credentials win over the environment",
			in:   oneBroker(brokerSettings{ManagementURL: testMgmtURL, Username: "cfg-user", Password: "cfg-pw"}),
			env:  map[string]string{"ARTEMIS_DC1_USERNAME": "env-user", "ARTEMIS_DC1_PASSWORD": "env-pw"},
			check: func(t *testing.T, set *providerRuntime) {
				if cfg := set.configs["dc1"]; cfg.Username != "cfg-user" || cfg.Password != "cfg-pw" {
					t.Errorf("credentials = %q/%q, want the configuration's", cfg.Username, cfg.Password)
				}
			},
		},
		{
			name: "ARTEMIS_BROKERS used when brokers is not set, with per-broker password",
			in:   providerSettings{},
			env: map[string]string{
				"ARTEMIS_BROKERS":      `{"dc2": {"management_url": "https://b:8161/console/jolokia", "username": "u"}, "dc1": {"management_url": "https://a/console/jolokia", "tls": {"insecure_skip_verify": true}}}`,
				"ARTEMIS_DC2_PASSWORD": "p2",
			},
			check: func(t *testing.T, set *providerRuntime) {
				if got := strings.Join(set.Names(), ","); got != "dc1,dc2" {
					t.Errorf("Names() = %q, want dc1,dc2", got)
				}
				if set.configs["dc2"].Password != "p2" {
					t.Errorf("dc2 password not filled from ARTEMIS_DC2_PASSWORD")
				}
				if tls := set.configs["dc1"].TLS; tls == nil || !tls.InsecureSkipVerify {
					t.Errorf("dc1 tls not read from JSON: %+v", tls)
				}
			},
		},
		{
			name: "ARTEMIS_BROKERS ignored when brokers is set",
			in:   oneBroker(brokerSettings{ManagementURL: testMgmtURL}),
			env:  map[string]string{"ARTEMIS_BROKERS": `{"other": {"management_url": "http://x"}}`},
			check: func(t *testing.T, set *providerRuntime) {
				if got := strings.Join(set.Names(), ","); got != "dc1" {
					t.Errorf("Names() = %q, want only dc1", got)
				}
			},
		},
		{
			name: "ledger DSN from the environment",
			in:   oneBroker(brokerSettings{ManagementURL: testMgmtURL}),
			env:  map[string]string{"ARTEMIS_LEDGER_DSN": "postgres://env@h/db?sslmode=verify-full"},
			check: func(t *testing.T, set *providerRuntime) {
				if set.LedgerDSN() != "postgres://env@h/db?sslmode=verify-full" {
					t.Errorf("LedgerDSN() = %q", set.LedgerDSN())
				}
			},
		},
		{
			name: "ledger DSN from the config wins",
			in:   providerSettings{Brokers: oneBroker(brokerSettings{ManagementURL: testMgmtURL}).Brokers, LedgerDSN: "postgres://cfg@h/db?sslmode=verify-full"},
			env:  map[string]string{"ARTEMIS_LEDGER_DSN": "postgres://env@h/db?sslmode=verify-full"},
			check: func(t *testing.T, set *providerRuntime) {
				if set.LedgerDSN() != "postgres://cfg@h/db?sslmode=verify-full" {
					t.Errorf("LedgerDSN() = %q", set.LedgerDSN())
				}
			},
		},
		{
			name: "a plan only reads by default",
			in:   oneBroker(brokerSettings{ManagementURL: testMgmtURL}),
			check: func(t *testing.T, set *providerRuntime) {
				if set.planSendsCanaries {
					t.Error("planSendsCanaries is on without plan_sends_canaries or ARTEMIS_PLAN_SENDS_CANARIES")
				}
			},
		},
		{
			name: "plan_sends_canaries from the environment",
			in:   oneBroker(brokerSettings{ManagementURL: testMgmtURL}),
			env:  map[string]string{"ARTEMIS_PLAN_SENDS_CANARIES": " TRUE "},
			check: func(t *testing.T, set *providerRuntime) {
				if !set.planSendsCanaries {
					t.Error("planSendsCanaries is off with ARTEMIS_PLAN_SENDS_CANARIES=TRUE")
				}
			},
		},
		{
			name: "plan_sends_canaries from the config wins",
			in:   providerSettings{Brokers: oneBroker(brokerSettings{ManagementURL: testMgmtURL}).Brokers, PlanSendsCanaries: new(bool)},
			env:  map[string]string{"ARTEMIS_PLAN_SENDS_CANARIES": "1"},
			check: func(t *testing.T, set *providerRuntime) {
				if set.planSendsCanaries {
					t.Error("planSendsCanaries is on although the provider block sets it false")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, diags := resolveSettings(tt.in, fakeEnv(tt.env), fakeFiles(tt.files))
			unexpected := 0
			for _, d := range diags {
				if d.Summary() == "TLS certificate verification is off" {
					continue // insecure_skip_verify's own warning, tested on its own
				}
				unexpected++
				t.Errorf("unexpected diagnostic: %s", diagText(d))
			}
			if unexpected > 0 {
				t.FailNow()
			}
			if set.Unknown() {
				t.Error("Unknown() = true for a fully known configuration")
			}
			tt.check(t, set)
		})
	}
}

func TestResolveSettings_UnknownValuesWarnAndDeferTheBroker(t *testing.T) {
	in := providerSettings{Brokers: map[string]brokerSettings{
		"dc1": {ManagementURL: testMgmtURL, Username: "transfer", unknown: map[string]bool{"password": true}},
		"dc2": {ManagementURL: testMgmtURL},
	}}
	set, diags := resolveSettings(in, fakeEnv(nil), fakeFiles(nil))
	if diags.HasError() {
		t.Fatalf("unknown password gave an error: %v", diags)
	}
	if len(diags.Warnings()) != 1 {
		t.Fatalf("want one warning, got %v", diags)
	}
	w := diagText(diags.Warnings()[0])
	for _, want := range []string{`brokers["dc1"].password`, "preflight", "skipped until"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q does not mention %q", w, want)
		}
	}
	if !set.Unknown() {
		t.Error("Unknown() = false")
	}
	if got := strings.Join(set.Names(), ","); got != "dc1,dc2" {
		t.Errorf("Names() = %q, want dc1,dc2", got)
	}
	if _, err := set.Client("dc1"); err == nil || !strings.Contains(err.Error(), "known only after apply") {
		t.Errorf("Client(dc1) error = %v, want one saying the config is not known yet", err)
	}
	if _, err := set.Client("dc2"); err != nil {
		t.Errorf("Client(dc2): %v", err)
	}
}

func TestResolveSettings_UnknownBrokersMapWarns(t *testing.T) {
	set, diags := resolveSettings(providerSettings{BrokersUnknown: true}, fakeEnv(map[string]string{"ARTEMIS_BROKERS": "{}"}), fakeFiles(nil))
	if diags.HasError() || len(diags.Warnings()) != 1 {
		t.Fatalf("want exactly one warning, got %v", diags)
	}
	if !set.Unknown() || len(set.Names()) != 0 {
		t.Errorf("Unknown() = %v, Names() = %v", set.Unknown(), set.Names())
	}
	if _, err := set.Client("dc1"); err == nil || !strings.Contains(err.Error(), "after apply") {
		t.Errorf("Client error = %v", err)
	}
}

func TestBrokerSet_ClientNamesUnknownBrokerAndListsConfiguredOnes(t *testing.T) {
	set, diags := resolveSettings(providerSettings{Brokers: map[string]brokerSettings{
		"zeta": {ManagementURL: testMgmtURL}, "alpha": {ManagementURL: testMgmtURL}, "mid": {ManagementURL: testMgmtURL},
	}}, fakeEnv(nil), fakeFiles(nil))
	if diags.HasError() {
		t.Fatal(diags)
	}
	_, err := set.Client("nope")
	if err == nil {
		t.Fatal("no error for an unknown broker")
	}
	if want := `no broker named "nope" in the provider's brokers; configured brokers: alpha, mid, zeta`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestBrokerSet_ClientIsBuiltOnceAndReused(t *testing.T) {
	set, diags := resolveSettings(oneBroker(brokerSettings{ManagementURL: testMgmtURL}), fakeEnv(nil), fakeFiles(nil))
	if diags.HasError() {
		t.Fatal(diags)
	}
	a, err := set.Client("dc1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := set.Client("dc1")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("Client built a second client for the same broker")
	}
	if a.Name() != "dc1" {
		t.Errorf("client name = %q", a.Name())
	}
}

func TestBrokerSetFromProviderData(t *testing.T) {
	var diags diag.Diagnostics
	if got := runtimeFromProviderData(nil, &diags); got != nil || diags.HasError() {
		t.Errorf("nil data: got %v, %v; want nil without error", got, diags)
	}
	want := &providerRuntime{}
	if got := runtimeFromProviderData(want, &diags); got != want || diags.HasError() {
		t.Errorf("providerRuntime data: got %v, %v", got, diags)
	}
	if got := runtimeFromProviderData("wrong", &diags); got != nil || !diags.HasError() {
		t.Fatalf("wrong type: got %v, %v; want an error", got, diags)
	}
	if d := diagText(diags.Errors()[0]); !strings.Contains(d, "string") || !strings.Contains(d, "bug in the provider") {
		t.Errorf("error %q does not name the type and say it is a bug", d)
	}
}

func TestBrokerSet_MaskSecretsHidesPasswordsKeysAndDSNInLogs(t *testing.T) {
	_, keyPEM := testenv.SelfSignedPEM(t)
	set := &providerRuntime{secrets: append([]string{"hunter2-pw", keyPEM}, secretsOfDSN("postgres://u:dsn-secret@h/db")...)}
	var out bytes.Buffer
	ctx := set.MaskSecrets(tflogtest.RootLogger(context.Background(), &out))
	tflog.Info(ctx, "connecting with hunter2-pw", map[string]any{"password": "anything", "dsn": "postgres://u:dsn-secret@h/db", "other": "dsn-secret"})
	logged := out.String()
	for _, secret := range []string{"hunter2-pw", "dsn-secret", "anything"} {
		if strings.Contains(logged, secret) {
			t.Errorf("log line shows %q: %s", secret, logged)
		}
	}
}

func TestProviderSchema_IsValidAndMarksSecretsSensitive(t *testing.T) {
	ctx := context.Background()
	var resp provider.SchemaResponse
	New("test")().Schema(ctx, provider.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
		t.Fatal(diags)
	}
	if !resp.Schema.Attributes["ledger_dsn"].IsSensitive() {
		t.Error("ledger_dsn is not sensitive")
	}
	broker := brokerSchemaAttributes()
	if !broker["password"].IsSensitive() {
		t.Error("password is not sensitive")
	}
	if !broker["tls"].(schema.SingleNestedAttribute).Attributes["client_key_pem"].IsSensitive() {
		t.Error("tls.client_key_pem is not sensitive")
	}
}

func TestProviderConfigure_UnknownPasswordWarnsWithoutError(t *testing.T) {
	resp := configureWith(t, func(objType tftypes.Object) tftypes.Value {
		top := oneBrokerConfig(objType, tftypes.NewValue(tftypes.String, tftypes.UnknownValue))
		return tftypes.NewValue(objType, top)
	})
	if resp.Diagnostics.HasError() {
		t.Fatalf("unknown password gave an error: %v", resp.Diagnostics)
	}
	if len(resp.Diagnostics.Warnings()) != 1 || !strings.Contains(diagText(resp.Diagnostics.Warnings()[0]), "skipped until") {
		t.Errorf("want one warning about skipped preflight, got %v", resp.Diagnostics)
	}
	set, ok := resp.DataSourceData.(*providerRuntime)
	if !ok || !set.Unknown() || resp.ResourceData != resp.DataSourceData {
		t.Fatalf("provider data = %#v, want the same *providerRuntime for both with Unknown() true", resp.DataSourceData)
	}
}

func TestProviderConfigure_UnknownBrokersMapWarnsWithoutError(t *testing.T) {
	resp := configureWith(t, func(objType tftypes.Object) tftypes.Value {
		top := nullAttrs(objType)
		top["brokers"] = tftypes.NewValue(objType.AttributeTypes["brokers"], tftypes.UnknownValue)
		top["ledger_dsn"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
		return tftypes.NewValue(objType, top)
	})
	if resp.Diagnostics.HasError() || len(resp.Diagnostics.Warnings()) != 2 {
		t.Fatalf("want two warnings and no error, got %v", resp.Diagnostics)
	}
}

func TestProviderConfigure_TLSFileReadFromDisk(t *testing.T) {
	caPEM, _ := testenv.SelfSignedPEM(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	resp := configureWith(t, func(objType tftypes.Object) tftypes.Value {
		brokersType := objType.AttributeTypes["brokers"].(tftypes.Map)
		brokerType := brokersType.ElementType.(tftypes.Object)
		tlsType := brokerType.AttributeTypes["tls"].(tftypes.Object)
		tlsVals := nullAttrs(tlsType)
		tlsVals["ca_cert_file"] = tftypes.NewValue(tftypes.String, caFile)
		broker := nullAttrs(brokerType)
		broker["management_url"] = tftypes.NewValue(tftypes.String, "https://127.0.0.1:8443/console/jolokia")
		broker["amqp_urls"] = tftypes.NewValue(brokerType.AttributeTypes["amqp_urls"], []tftypes.Value{tftypes.NewValue(tftypes.String, "amqps://127.0.0.1:5671")})
		broker["tls"] = tftypes.NewValue(tlsType, tlsVals)
		top := nullAttrs(objType)
		top["brokers"] = tftypes.NewValue(brokersType, map[string]tftypes.Value{"dc1": tftypes.NewValue(brokerType, broker)})
		return tftypes.NewValue(objType, top)
	})
	if len(resp.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %v", resp.Diagnostics)
	}
	set := resp.DataSourceData.(*providerRuntime)
	if cfg := set.configs["dc1"]; cfg.TLS == nil || cfg.TLS.RootCAs == nil || len(cfg.AMQPURLs) != 1 {
		t.Errorf("TLS CA not read from %s: %+v", caFile, cfg)
	}
}

// ---------------------------------------------------------------------------------------------
// Acceptance-style tests: the Terraform CLI runs the provider in-process. No broker is
// contacted: a provider is configured only when something uses it, so each configuration reads
// an artemis_broker data source naming a broker that is not configured. A configuration error
// stops Terraform first; a valid configuration ends in the data source's "no broker named"
// error, which lists the brokers the provider ended up with.

// probeConfig is providerBlock plus a data source that makes Terraform configure the provider.
func probeConfig(providerBlock string) string {
	return providerBlock + `
data "artemis_broker" "probe" {
  broker = "not-configured"
}
`
}

func TestAccProviderConfig_RejectsBadConfigNamingAttributeAndFix(t *testing.T) {
	clearArtemisEnv(t)
	tests := []struct {
		name   string
		config string
		want   *regexp.Regexp
	}{
		{
			name: "malformed management URL",
			config: `
provider "artemis" {
  brokers = {
    dc1 = { management_url = "127.0.0.1:8161/console/jolokia" }
  }
}`,
			want: errorRe("Invalid management URL", `brokers["dc1"].management_url`, "must start with http:// or https://", "Jolokia endpoint"),
		},
		{
			name: "malformed AMQP URL",
			config: `
provider "artemis" {
  brokers = {
    dc1 = {
      management_url = "http://127.0.0.1:8161/console/jolokia"
      amqp_urls      = ["tcp://127.0.0.1:61616"]
    }
  }
}`,
			want: errorRe("Invalid AMQP URL", `brokers["dc1"].amqp_urls[0]`, "must start with amqp:// or amqps://"),
		},
		{
			name: "username without password",
			config: `
provider "artemis" {
  brokers = {
    dc1 = {
      management_url = "http://127.0.0.1:8161/console/jolokia"
      username       = "transfer"
    }
  }
}`,
			want: errorRe("Missing password", `brokers["dc1"].password`, "Set password", "export ARTEMIS_DC1_PASSWORD"),
		},
		{
			name: "CA given inline and as a file",
			config: `
provider "artemis" {
  brokers = {
    dc1 = {
      management_url = "https://127.0.0.1:8443/console/jolokia"
      tls = {
        ca_cert_pem  = "-----BEGIN CERTIFICATE-----"
        ca_cert_file = "/etc/ssl/ca.pem"
      }
    }
  }
}`,
			want: errorRe("Conflicting TLS settings", `brokers["dc1"].tls.ca_cert_file`, "Set only one"),
		},
		{
			name: "no brokers at all",
			config: `
provider "artemis" {}`,
			want: errorRe("No brokers configured", "ARTEMIS_BROKERS"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      probeConfig(tt.config),
					PlanOnly:    true,
					ExpectError: tt.want,
				}},
			})
		})
	}
}

func TestAccProviderConfig_BrokersFromARTEMIS_BROKERS(t *testing.T) {
	clearArtemisEnv(t)
	t.Setenv("ARTEMIS_BROKERS", `{
	  "dc2": {"management_url": "http://127.0.0.1:8261/console/jolokia", "username": "transfer"},
	  "dc1": {"management_url": "http://127.0.0.1:8161/console/jolokia"}
	}`)
	t.Setenv("ARTEMIS_DC2_PASSWORD", "from-env")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      probeConfig(`provider "artemis" {}`),
			PlanOnly:    true,
			ExpectError: errorRe(`no broker named "not-configured"`, "configured brokers: dc1, dc2"),
		}},
	})
}

func TestAccProviderConfig_PasswordFromEnvironment(t *testing.T) {
	clearArtemisEnv(t)
	t.Setenv("ARTEMIS_DC1_PASSWORD", "from-env")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// Without the variable this is the "Missing password" error above.
			Config: probeConfig(`
provider "artemis" {
  brokers = {
    dc1 = {
      management_url = "http://127.0.0.1:8161/console/jolokia"
      username       = "transfer"
    }
  }
}`),
			PlanOnly:    true,
			ExpectError: errorRe(`no broker named "not-configured"`, "configured brokers: dc1"),
		}},
	})
}

func TestAccProviderConfig_UnknownPasswordAtPlanIsNotAnError(t *testing.T) {
	clearArtemisEnv(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// The password is known only after terraform_data is created; configuring must not
			// fail on it. The probe then fails on its own broker name, which proves the provider
			// was configured, with dc1 known by name.
			Config: probeConfig(`
resource "terraform_data" "password" {
  input = "generated"
}

provider "artemis" {
  brokers = {
    dc1 = {
      management_url = "http://127.0.0.1:8161/console/jolokia"
      username       = "transfer"
      password       = terraform_data.password.output
    }
  }
}`),
			PlanOnly:    true,
			ExpectError: errorRe(`no broker named "not-configured"`, "configured brokers: dc1"),
		}},
	})
}

func TestProviderConfigure_UnknownBrokerEntryWarnsWithoutError(t *testing.T) {
	resp := configureWith(t, func(objType tftypes.Object) tftypes.Value {
		brokersType := objType.AttributeTypes["brokers"].(tftypes.Map)
		top := nullAttrs(objType)
		top["brokers"] = tftypes.NewValue(brokersType, map[string]tftypes.Value{
			"dc1": tftypes.NewValue(brokersType.ElementType, tftypes.UnknownValue),
		})
		return tftypes.NewValue(objType, top)
	})
	if resp.Diagnostics.HasError() || len(resp.Diagnostics.Warnings()) != 1 {
		t.Fatalf("want one warning and no error, got %v", resp.Diagnostics)
	}
	set := resp.DataSourceData.(*providerRuntime)
	if !set.Unknown() || strings.Join(set.Names(), ",") != "dc1" {
		t.Errorf("Unknown() = %v, Names() = %v", set.Unknown(), set.Names())
	}
}
