package provider

import (
	"regexp"
	"strings"
	"testing"
)

// terraform validate refuses a bad value of the provider block, on the attribute at fault and in
// the words Configure uses, without configuring the provider: no broker is needed, and none is
// contacted.

// validateProbe is a provider block whose broker dc1 has the given attribute lines, and a data
// source that uses the provider.
func validateProbe(brokers string) string {
	return "provider \"artemis\" {\n  brokers = {\n" + brokers + "\n  }\n}\n" + `
data "artemis_broker" "probe" {
  broker = "dc1"
}
`
}

const validateMgmt = `management_url = "http://127.0.0.1:8161/console/jolokia"`

func TestProviderValidate_RefusesEachBadValueOfTheProviderBlock(t *testing.T) {
	clearArtemisEnv(t)
	tf := newTerraformCLI(t, &artemisProvider{version: "test"})
	tf.write(t, "main.tf", validateProbe(`dc1 = { `+validateMgmt+` }`))
	tf.run(t, "init", "-input=false")
	for _, tt := range []struct {
		name    string
		brokers string
		want    []string // summary, then words of the detail
	}{
		{"connect timeout that is not a duration", `dc1 = {
  ` + validateMgmt + `
  connect_timeout = "ten seconds"
}`, []string{"Invalid duration", `brokers["dc1"].connect_timeout: "ten seconds" is not a duration`, `Use a Go duration such as "10s"`}},
		{"request timeout that is not positive", `dc1 = {
  ` + validateMgmt + `
  request_timeout = "-5s"
}`, []string{"Invalid duration", `brokers["dc1"].request_timeout: must be positive, got "-5s"`, "Leave it unset for the default"}},
		{"management URL with an ftp scheme", `dc1 = { management_url = "ftp://127.0.0.1:8161/console/jolokia" }`,
			[]string{"Invalid management URL", `brokers["dc1"].management_url:`, "must start with http:// or https://", "Jolokia endpoint"}},
		{"management URL that is empty", `dc1 = { management_url = " " }`,
			[]string{"Missing management URL", `brokers["dc1"].management_url: not set`, "Jolokia endpoint"}},
		{"management URL without a host", `dc1 = { management_url = "http:///console/jolokia" }`,
			[]string{"Invalid management URL", `brokers["dc1"].management_url:`, "has no host"}},
		{"AMQP URL with a tcp scheme", `dc1 = {
  ` + validateMgmt + `
  amqp_urls = ["amqp://127.0.0.1:5672", "tcp://127.0.0.1:61616"]
}`, []string{"Invalid AMQP URL", `brokers["dc1"].amqp_urls[1]:`, "must start with amqp:// or amqps://", "AMQP acceptor"}},
		{"management origin without a scheme", `dc1 = {
  ` + validateMgmt + `
  management_origin = "127.0.0.1"
}`, []string{"Invalid management origin", `brokers["dc1"].management_origin:`, "must start with http:// or https://", "leave it unset"}},
		{"CA given inline and as a file", `dc1 = {
  management_url = "https://127.0.0.1:8443/console/jolokia"
  tls = {
    ca_cert_pem  = "-----BEGIN CERTIFICATE-----"
    ca_cert_file = "/nonexistent/ca.pem"
  }
}`, []string{"Conflicting TLS settings", `brokers["dc1"].tls.ca_cert_file: both tls.ca_cert_pem and tls.ca_cert_file are set`, "Set only one"}},
		{"client key given inline and as a file", `dc1 = {
  management_url = "https://127.0.0.1:8443/console/jolokia"
  tls = {
    client_key_pem  = "key"
    client_key_file = "/nonexistent/key.pem"
  }
}`, []string{"Conflicting TLS settings", `brokers["dc1"].tls.client_key_file: both tls.client_key_pem and tls.client_key_file are set`}},
		{"broker key with a space", `"dc 1" = { ` + validateMgmt + ` }`,
			[]string{"Invalid broker name", `brokers["dc 1"]:`, "must start with a letter or digit", "Rename the key in brokers"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tf.write(t, "main.tf", validateProbe(tt.brokers))
			out := tf.fails(t, "validate")
			if re := validateErrorRe(tt.want); !re.MatchString(out) {
				t.Errorf("terraform validate does not say %q in order:\n%s", tt.want, out)
			}
		})
	}
}

// Values known only later (here variables, which terraform validate never knows) pass validate;
// the same check refuses them once they are known.
func TestProviderValidate_ValuesUnknownAtValidatePassAndAreCheckedOnceKnown(t *testing.T) {
	clearArtemisEnv(t)
	tf := newTerraformCLI(t, &artemisProvider{version: "test"})
	tf.write(t, "main.tf", `
variable "management_url" { type = string }
variable "amqp_url" { type = string }
variable "timeout" { type = string }
variable "key" { type = string }
`+validateProbe(`(var.key) = {
  management_url  = var.management_url
  amqp_urls       = [var.amqp_url]
  connect_timeout = var.timeout
}`))
	tf.run(t, "init", "-input=false")
	tf.run(t, "validate")

	out := tf.fails(t, "plan", "-input=false", "-var", "key=dc1", "-var", "management_url=ftp://127.0.0.1:8161/console/jolokia",
		"-var", "amqp_url=amqp://127.0.0.1:5672", "-var", "timeout=10s")
	if re := validateErrorRe([]string{"Invalid management URL", `brokers["dc1"].management_url:`, "must start with http:// or https://"}); !re.MatchString(out) {
		t.Errorf("terraform plan with a known ftp:// URL does not refuse it:\n%s", out)
	}
}

// A value known only at apply passes validate and plan, and Configure refuses it at apply in the
// same words.
func TestProviderValidate_ValueKnownAtApplyIsRefusedByConfigure(t *testing.T) {
	clearArtemisEnv(t)
	tf := newTerraformCLI(t, &artemisProvider{version: "test"})
	tf.write(t, "main.tf", `
resource "terraform_data" "timeout" {
  input = "ten seconds"
}
`+strings.Replace(validateProbe(`dc1 = {
  `+validateMgmt+`
  connect_timeout = terraform_data.timeout.output
}`), `broker = "dc1"`, "broker     = \"dc1\"\n  depends_on = [terraform_data.timeout]", 1))
	tf.run(t, "init", "-input=false")
	tf.run(t, "validate")
	out := tf.fails(t, "apply", "-input=false", "-auto-approve")
	if re := validateErrorRe([]string{"Invalid duration", `brokers["dc1"].connect_timeout: "ten seconds" is not a duration`}); !re.MatchString(out) {
		t.Errorf("terraform apply does not refuse the timeout at configure:\n%s", out)
	}
}

// validateErrorRe matches an error as the CLI prints it: "Error: <summary>", then the words of
// its detail in order, each allowed to wrap across lines.
func validateErrorRe(want []string) *regexp.Regexp {
	words := func(w string) string { return strings.Join(strings.Fields(regexp.QuoteMeta(w)), `\s+`) }
	parts := []string{`Error:\s+` + words(want[0])}
	for _, w := range want[1:] {
		parts = append(parts, words(w))
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, `.*`))
}

// fails runs a terraform command (-no-color added) that must fail, and returns its output.
func (tf *terraformCLI) fails(t *testing.T, args ...string) string {
	t.Helper()
	out, err := tf.command(args...)
	if err == nil {
		t.Fatalf("terraform %s succeeded, want it to fail:\n%s", args[0], out)
	}
	return out
}
