package provider

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// ---------------------------------------------------------------------------------------------
// Unit tests: what the provider's configuration says about TLS and secrets, no broker.

// TestResolveSettings_ClearTextCredentialsWarnOnTheirAttributes: the provider's configuration
// puts each clear-text warning on the attribute that sends the secret (with the password from
// the environment too), never shows the secret, and still configures the broker.
func TestResolveSettings_ClearTextCredentialsWarnOnTheirAttributes(t *testing.T) {
	in := oneBroker(brokerSettings{ManagementURL: "http://broker.example.com:8161/console/jolokia", Username: "transfer",
		AMQPURLs: []string{"amqp://broker.example.com:5672"}})
	in.LedgerDSN = "postgres://ledger:ledger-pw@db.example.com:5432/artemis"
	set, diags := resolveSettings(in, fakeEnv(map[string]string{"ARTEMIS_DC1_PASSWORD": "env-secret"}), fakeFiles(nil))
	if diags.HasError() {
		t.Fatalf("clear-text credentials are an error, want warnings: %v", diags)
	}
	want := map[string]string{
		`brokers["dc1"].management_url`: "Management password sent in clear",
		`brokers["dc1"].amqp_urls`:      "AMQP password sent in clear",
		`ledger_dsn`:                    "Ledger credentials not protected on the network",
	}
	got := map[string]string{}
	for _, w := range diags.Warnings() {
		wp, ok := w.(interface{ Path() path.Path })
		if !ok {
			t.Errorf("a warning on no attribute: %s", diagText(w))
			continue
		}
		got[wp.Path().String()] = w.Summary()
		for _, secret := range []string{"env-secret", "ledger-pw"} {
			if strings.Contains(w.Detail(), secret) {
				t.Errorf("the warning shows a secret: %s", diagText(w))
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings by attribute\n got %v\nwant %v", got, want)
	}
	if _, err := set.Client("dc1"); err != nil {
		t.Errorf("a warning must not keep the broker from being configured: %v", err)
	}
}

func TestResolveSettings_InsecureSkipVerifyWarnsOnItsAttribute(t *testing.T) {
	in := oneBroker(brokerSettings{ManagementURL: "https://127.0.0.1:8443/console/jolokia", TLS: &tlsSettings{InsecureSkipVerify: true}})
	set, diags := resolveSettings(in, fakeEnv(nil), fakeFiles(nil))
	if diags.HasError() || len(diags.Warnings()) != 1 {
		t.Fatalf("want one warning and no error, got %v", diags)
	}
	w := diags.Warnings()[0]
	want := path.Root("brokers").AtMapKey("dc1").AtName("tls").AtName("insecure_skip_verify")
	if wp, ok := w.(interface{ Path() path.Path }); !ok || !wp.Path().Equal(want) {
		t.Errorf("the warning is not on %s: %s", want, diagText(w))
	}
	for _, words := range []string{"man in the middle", "password", "every message", "tls.ca_cert_file"} {
		if !strings.Contains(w.Detail(), words) {
			t.Errorf("the warning does not say %q: %s", words, diagText(w))
		}
	}
	if _, err := set.Client("dc1"); err != nil {
		t.Errorf("a warning must not keep the broker from being configured: %v", err)
	}

	// From ARTEMIS_BROKERS the warning cannot point at an attribute, so its text names it.
	set, diags = resolveSettings(providerSettings{}, fakeEnv(map[string]string{envBrokers: `{"dc1": {
		"management_url": "https://127.0.0.1:8443/console/jolokia", "tls": {"insecure_skip_verify": true}}}`}), fakeFiles(nil))
	if diags.HasError() || len(diags.Warnings()) != 1 || !strings.Contains(diags.Warnings()[0].Detail(), `brokers["dc1"].tls.insecure_skip_verify`) {
		t.Fatalf("want one warning naming the attribute, got %v", diags)
	}
	if _, err := set.Client("dc1"); err != nil {
		t.Error(err)
	}
}

func TestResolveSettings_DiagnosticsNeverShowAPasswordInAURL(t *testing.T) {
	const secret = "hunter2-in-url"
	for _, s := range []brokerSettings{
		{ManagementURL: "http://admin:" + secret + "@127.0.0.1:bad/console/jolokia"},
		{ManagementURL: "ftp://admin:" + secret + "@127.0.0.1/console/jolokia"},
		{ManagementURL: "admin:" + secret + "@127.0.0.1:8161"},
		{ManagementURL: testMgmtURL, AMQPURLs: []string{"amqp://admin:" + secret + "@127.0.0.1:bad"}},
		{ManagementURL: testMgmtURL, AMQPURLs: []string{"tcp://admin:" + secret + "@127.0.0.1:61616"}},
		{ManagementURL: testMgmtURL, ManagementOrigin: "ftp://admin:" + secret + "@127.0.0.1"},
	} {
		_, diags := resolveSettings(oneBroker(s), fakeEnv(nil), fakeFiles(nil))
		if !diags.HasError() {
			t.Errorf("%+v: want an error", s)
			continue
		}
		for _, d := range diags {
			if text := diagText(d); strings.Contains(text, secret) || !strings.Contains(text, "admin:***@127.0.0.1") {
				t.Errorf("the diagnostic shows the password, or not the redacted URL: %s", text)
			}
		}
	}
}

// Passwords inside URLs and a client key read from a file are masked in logs like the
// password attribute is.
func TestResolveSettings_MasksURLPasswordsAndKeyFilesInLogs(t *testing.T) {
	certPEM, keyPEM := testenv.SelfSignedPEM(t)
	in := oneBroker(brokerSettings{
		ManagementURL: "http://admin:mgmt-url-secret@127.0.0.1:8161/console/jolokia",
		AMQPURLs:      []string{"amqps://admin:amqp-url-secret@127.0.0.1:5671"},
		TLS:           &tlsSettings{ClientCertFile: "/c.pem", ClientKeyFile: "/k.pem"},
	})
	in.LedgerDSN = "host=127.0.0.1 user=ledger password=kv-dsn-secret dbname=ledger"
	set, diags := resolveSettings(in, fakeEnv(nil), fakeFiles(map[string]string{"/c.pem": certPEM, "/k.pem": keyPEM}))
	if diags.HasError() {
		t.Fatal(diags)
	}
	var out bytes.Buffer
	ctx := set.MaskSecrets(tflogtest.RootLogger(context.Background(), &out))
	keyLine := strings.Split(keyPEM, "\n")[1]
	tflog.Info(ctx, "dialing with mgmt-url-secret and amqp-url-secret and kv-dsn-secret, key "+keyPEM)
	tflog.Info(ctx, "key line "+keyLine)
	for _, secret := range []string{"mgmt-url-secret", "amqp-url-secret", "kv-dsn-secret", keyLine} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("the log shows %q: %s", secret, out.String())
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Acceptance tests against the real brokers.

// secretsFound names every secret that text holds, and where.
func secretsFound(where, text string, secrets map[string]string) []string {
	var found []string
	for name, secret := range secrets {
		if i := strings.Index(text, secret); i >= 0 {
			from, to := max(0, i-600), min(len(text), i+len(secret)+100)
			found = append(found, fmt.Sprintf("%s holds %s: ...%s...", where, name, strings.ReplaceAll(text[from:to], secret, "<"+name+">")))
		}
	}
	sort.Strings(found)
	return found
}

// keySecrets lists the lines of a PEM private key's body: a log may escape the newlines of the
// whole key, but any one line of it is a leak.
func keySecrets(name, keyPEM string) map[string]string {
	out := map[string]string{}
	for i, line := range strings.Split(keyPEM, "\n") {
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			out[fmt.Sprintf("%s (line %d)", name, i)] = line
		}
	}
	return out
}

func TestAccProviderConfig_InsecureSkipVerifyWarnsAtPlan(t *testing.T) {
	env := testenv.Require(t)
	logs := traceLogs(t)
	tb := env.Broker(t, "target")
	config := fmt.Sprintf(`
provider "artemis" {
  brokers = {
    target = {
      amqp_urls      = [%q]
      management_url = %q
      username       = %q
      password       = %q
      tls            = { insecure_skip_verify = true }
    }
  }
}

data "artemis_broker" "target" { broker = "target" }
`, tb.AMQPSURL, tb.ManagementURL, env.TransferUser, env.TransferPassword)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    []resource.TestStep{{Config: config, PlanOnly: true}},
	})
	// The provider answered Terraform's ConfigureProvider with the warning on the attribute;
	// terraform-plugin-go logs every diagnostic it returns.
	text := logs()
	re := regexp.MustCompile(`Response contains warning diagnostic[^\n]*`)
	var warned bool
	for _, line := range re.FindAllString(text, -1) {
		line = strings.ReplaceAll(line, `\`, "") // the log quotes the attribute path's quotes
		if strings.Contains(line, "TLS certificate verification is off") &&
			strings.Contains(line, `AttributeName("brokers").ElementKeyString("target").AttributeName("tls").AttributeName("insecure_skip_verify")`) &&
			strings.Contains(line, "man in the middle") && strings.Contains(line, "tls.ca_cert_file") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("plan gave no warning on brokers[\"target\"].tls.insecure_skip_verify; warnings logged: %q", re.FindAllString(text, -1))
	}
}

// A wrong password inside management_url is refused by the broker, and the error names the
// user and the URL without the password; no log shows it either.
func TestAccProviderConfig_WrongPasswordInAURLIsNeverEchoed(t *testing.T) {
	env := testenv.Require(t)
	logs := traceLogs(t)
	tb := env.Broker(t, "target")
	const wrong = "wrong-url-pw-5be21c"
	mgmt := strings.Replace(tb.ManagementURL, "://", "://"+env.TransferUser+":"+wrong+"@", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "artemis" {
  brokers = {
    target = { management_url = %q }
  }
}

data "artemis_broker" "target" { broker = "target" }
`, mgmt),
			PlanOnly:    true,
			ExpectError: errorRe(env.TransferUser+":***@127.0.0.1", `refused the login of user "`+env.TransferUser+`"`),
		}},
	})
	for _, f := range secretsFound("the TRACE logs", logs(), map[string]string{"the password in management_url": wrong}) {
		t.Error(f)
	}
}

// testAccKeyFiles writes a client certificate and its key for the provider's tls block.
func testAccKeyFiles(t *testing.T) (certFile, keyFile, keyPEM string) {
	t.Helper()
	certPEM, keyPEM := testenv.SelfSignedPEM(t)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, []byte(certPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(keyPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, keyPEM
}

// An apply of a small move with every kind of secret configured (the brokers' passwords, given
// as password and inside the URLs, a ledger DSN with a password, client keys inline and in a file)
// leaves none of them in Terraform's and the provider's TRACE logs, nor in the state.
func TestAccQueueTransfer_TraceLogsAndStateHoldNoSecret(t *testing.T) {
	f := newTransferFixture(t, 5)
	logs := traceLogs(t)
	sb, tb := f.env.Broker(t, "source"), f.env.Broker(t, "target")

	const dsnPassword = "ledger-pw-9e41aa"
	dsn, err := url.Parse(f.env.PostgresDSN)
	if err != nil {
		t.Fatal(err)
	}
	dsn.User = url.UserPassword(dsn.User.Username(), dsnPassword)
	certInline, keyInline := testenv.SelfSignedPEM(t)
	certFile, keyFile, keyFromFile := testAccKeyFiles(t)
	// The source's credentials are only inside its URLs.
	withCreds := func(u string) string {
		return strings.Replace(u, "://", "://"+f.env.TransferUser+":"+f.env.TransferPassword+"@", 1)
	}

	config := fmt.Sprintf(`
provider "artemis" {
  ledger_dsn = %q
  brokers = {
    source = {
      amqp_urls      = [%q]
      management_url = %q
      tls            = { client_cert_file = %q, client_key_file = %q }
    }
    target = {
      amqp_urls      = [%q]
      management_url = %q
      username       = %q
      password       = %q
      tls = {
        ca_cert_file    = %q
        client_cert_pem = %q
        client_key_pem  = %q
      }
    }
  }
}

resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}
`, dsn.String(),
		withCreds(sb.AMQPURL), withCreds(sb.ManagementURL), certFile, keyFile,
		tb.AMQPSURL, tb.ManagementURL, f.env.TransferUser, f.env.TransferPassword, f.env.TLSCAFile, certInline, keyInline,
		f.src, f.tgt)

	secrets := map[string]string{
		"the transfer user's password": f.env.TransferPassword,
		"the ledger DSN's password":    dsnPassword,
	}
	for k, v := range keySecrets("the inline client key", keyInline) {
		secrets[k] = v
	}
	for k, v := range keySecrets("the client key file", keyFromFile) {
		secrets[k] = v
	}

	var inState []string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(5)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				f.checkDepths(0, 5),
				func(s *terraform.State) error {
					for _, m := range s.Modules {
						for name, r := range m.Resources {
							if r.Primary == nil {
								continue
							}
							for attr, v := range r.Primary.Attributes {
								inState = append(inState, secretsFound("state attribute "+name+"."+attr, v, secrets)...)
							}
						}
					}
					return nil
				},
			),
		}},
	})
	for _, found := range inState {
		t.Error(found)
	}
	text := logs()
	if dump := os.Getenv("SECURITY_TEST_DUMP"); dump != "" {
		_ = os.WriteFile(dump, []byte(text), 0o600)
	}
	// Both the CLI's log and the provider's own must have reached the files. The CLI's first line
	// names it: "Terraform version: ..." or, under OpenTofu (make test-tofu), "OpenTofu version: ...".
	for _, line := range []string{"provider configured", "artemis_queue_transfer"} {
		if !strings.Contains(text, line) {
			t.Fatalf("the logs do not hold %q: the scan would prove nothing", line)
		}
	}
	if !strings.Contains(text, "Terraform version") && !strings.Contains(text, "OpenTofu version") {
		t.Fatal(`the logs hold neither "Terraform version" nor "OpenTofu version", so the CLI's log is not among them: the scan would prove nothing`)
	}
	for _, found := range secretsFound("the TRACE logs", text, secrets) {
		t.Error(found)
	}
}

// A move whose target is reached only over amqps://, with the environment's private CA, moves
// every message exactly once.
func TestAccQueueTransfer_MovesOverAMQPSWithAPrivateCA(t *testing.T) {
	const n = 300
	f := newTransferFixture(t, n)
	sb, tb := f.env.Broker(t, "source"), f.env.Broker(t, "target")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccTLSProviderBlock(f.env, sb.AMQPURL, tb.AMQPSURL, f.env.TLSCAFile) + f.resourceBlock(),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(n)),
				statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("status"), knownvalue.StringExact("completed")),
			},
			Check: resource.ComposeAggregateTestCheckFunc(f.checkNoRuns(), f.checkDepths(0, n), f.checkTargetHoldsExactly(f.ids)),
		}},
	})
}

// A target whose certificate the configured CA did not sign refuses the transfer at plan, on
// the target's broker, saying to set the CA; nothing moves.
func TestAccQueueTransfer_WrongCARefusesAtPlanAndMovesNothing(t *testing.T) {
	const n = 20
	f := newTransferFixture(t, n)
	sb, tb := f.env.Broker(t, "source"), f.env.Broker(t, "target")
	otherCA, _ := testenv.SelfSignedPEM(t) // a freshly made CA that signed nothing of the broker's
	caFile := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(caFile, []byte(otherCA), 0o600); err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      testAccTLSProviderBlock(f.env, sb.AMQPURL, tb.AMQPSURL, caFile) + f.resourceBlock(),
			PlanOnly:    true,
			ExpectError: errorRe("(target.broker)", "TLS certificate was not trusted", "tls.ca_cert_pem or tls.ca_cert_file"),
		}},
	})
	if d := f.depth(t, f.srcAdmin, f.src); d != n {
		t.Errorf("the source holds %d of %d after the refused plan", d, n)
	}
	if d := f.depth(t, f.tgtAdmin, f.tgt); d != 0 {
		t.Errorf("the target holds %d after the refused plan", d)
	}
	if err := f.checkNoRuns()(nil); err != nil {
		t.Error(err)
	}
}

// testAccTLSProviderBlock names the source (plain AMQP) and the target reached only at
// targetURL with the CA in caFile, both as the transfer user.
func testAccTLSProviderBlock(env *testenv.Env, sourceURL, targetURL, caFile string) string {
	sb, tb := env.Brokers["source"], env.Brokers["target"]
	return fmt.Sprintf(`
provider "artemis" {
  brokers = {
    source = {
      amqp_urls      = [%q]
      management_url = %q
      username       = %q
      password       = %q
    }
    target = {
      amqp_urls      = [%q]
      management_url = %q
      username       = %q
      password       = %q
      tls            = { ca_cert_file = %q }
    }
  }
}
`, sourceURL, sb.ManagementURL, env.TransferUser, env.TransferPassword,
		targetURL, tb.ManagementURL, env.TransferUser, env.TransferPassword, caFile)
}

// resourceBlock is this fixture's transfer without a provider block.
func (f *transferFixture) resourceBlock() string {
	return fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
}
`, f.src, f.tgt)
}
