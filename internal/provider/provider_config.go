package provider

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Environment variables read by the provider. A value in the provider block always wins.
const (
	// envBrokers holds a JSON object shaped like the brokers attribute. It is read only when
	// brokers is not set in the provider block.
	envBrokers = "ARTEMIS_BROKERS"
	// envLedgerDSN is used when ledger_dsn is not set.
	envLedgerDSN = "ARTEMIS_LEDGER_DSN"
	// envPlanSendsCanaries ("true" or "1") is used when plan_sends_canaries is not set, so that
	// an operator's own plan can prove what needs writes without editing the configuration.
	envPlanSendsCanaries = "ARTEMIS_PLAN_SENDS_CANARIES"
)

const exampleManagementURL = "http://127.0.0.1:8161/console/jolokia"

// brokerEnvName is the per-broker fallback variable for one attribute, e.g. ARTEMIS_DC1_PASSWORD
// for broker "dc1". The name is upper-cased and every other character than A-Z and 0-9 becomes _.
func brokerEnvName(broker, suffix string) string {
	var b strings.Builder
	b.WriteString("ARTEMIS_")
	for _, r := range strings.ToUpper(broker) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteByte('_')
	b.WriteString(suffix)
	return b.String()
}

// configSource says where the brokers came from, so that a diagnostic can point there.
type configSource int

const (
	fromConfig configSource = iota // the provider block
	fromEnv                        // ARTEMIS_BROKERS
)

// providerSettings is the provider configuration as plain values, before environment fallbacks.
type providerSettings struct {
	// Brokers is nil when the brokers attribute is null (not set) in the provider block.
	Brokers map[string]brokerSettings
	// BrokersUnknown is set when the brokers map itself is not known until apply.
	BrokersUnknown bool

	LedgerDSN        string
	LedgerDSNUnknown bool

	// PlanSendsCanaries is nil when plan_sends_canaries is not set.
	PlanSendsCanaries *bool
}

// brokerSettings is one broker as given in the provider block or in ARTEMIS_BROKERS. The JSON
// names match the schema so that the environment variable has the same shape as the block.
type brokerSettings struct {
	AMQPURLs         []string     `json:"amqp_urls"`
	ManagementURL    string       `json:"management_url"`
	ManagementOrigin string       `json:"management_origin"`
	Username         string       `json:"username"`
	Password         string       `json:"password"`
	BrokerName       string       `json:"broker_name"`
	TLS              *tlsSettings `json:"tls"`
	ConnectTimeout   string       `json:"connect_timeout"`
	RequestTimeout   string       `json:"request_timeout"`

	// unknown holds the attributes (as "password", "tls.ca_cert_file") whose values are not known
	// until apply; "" means the whole entry. Checks that involve them are skipped.
	unknown map[string]bool
}

// tlsSettings is the tls block of one broker.
type tlsSettings struct {
	CACertPEM          string `json:"ca_cert_pem"`
	CACertFile         string `json:"ca_cert_file"`
	ClientCertPEM      string `json:"client_cert_pem"`
	ClientCertFile     string `json:"client_cert_file"`
	ClientKeyPEM       string `json:"client_key_pem"`
	ClientKeyFile      string `json:"client_key_file"`
	ServerName         string `json:"server_name"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify"`
}

func (s brokerSettings) isUnknown(attr string) bool { return s.unknown[attr] }

// unknownAttrs lists the unknown attributes in a stable order.
func (s brokerSettings) unknownAttrs() []string {
	attrs := make([]string, 0, len(s.unknown))
	for a := range s.unknown {
		attrs = append(attrs, a)
	}
	sort.Strings(attrs)
	return attrs
}

// brokerAttrPath is the path of an attribute of one broker; attr may name a tls attribute as
// "tls.ca_cert_file", and "" is the broker's entry itself.
func brokerAttrPath(broker, attr string) path.Path {
	return attributePath(path.Root("brokers").AtMapKey(broker), attr)
}

// environment gives the provider its environment variables; tests pass a map.
type environment func(name string) string

// fileReader reads a TLS file; tests pass a fake.
type fileReader func(name string) ([]byte, error)

// problem is one finding about a broker's configuration: an error unless warning is set.
type problem struct {
	path    path.Path
	summary string
	detail  string
	warning bool
}

// hasErrors reports whether problems holds anything other than warnings.
func hasErrors(problems []problem) bool {
	for _, p := range problems {
		if !p.warning {
			return true
		}
	}
	return false
}

// resolveSettings applies the environment fallbacks to settings, checks everything that can be
// checked without contacting a broker, and returns the brokers for resources and data sources.
// It never dials. Values not known until apply give warnings, not errors.
func resolveSettings(in providerSettings, getenv environment, readFile fileReader) (*providerRuntime, diag.Diagnostics) {
	var diags diag.Diagnostics
	rt := &providerRuntime{
		configs: map[string]artemis.Config{},
		pending: map[string]bool{},
		clients: map[string]*artemis.Client{},
	}

	switch {
	case in.LedgerDSNUnknown:
		rt.ledgerUnknown = true
		diags.AddAttributeWarning(path.Root("ledger_dsn"), "Ledger DSN not known until apply",
			"ledger_dsn depends on a value that is known only after apply. Plan-time checks that need the ledger are skipped until it is known.")
	case in.LedgerDSN != "":
		rt.ledgerDSN = in.LedgerDSN
	default:
		rt.ledgerDSN = getenv(envLedgerDSN)
	}
	if rt.ledgerDSN != "" {
		rt.secrets = append(rt.secrets, secretsOfDSN(rt.ledgerDSN)...)
	}
	if in.PlanSendsCanaries != nil {
		rt.planSendsCanaries = *in.PlanSendsCanaries
	} else {
		switch v := strings.ToLower(strings.TrimSpace(getenv(envPlanSendsCanaries))); v {
		case "", "0", "false":
		case "1", "true":
			rt.planSendsCanaries = true
		default:
			diags.AddAttributeError(path.Root("plan_sends_canaries"), "Invalid "+envPlanSendsCanaries,
				fmt.Sprintf("%s is %q; set it to true or false (or unset it), or set plan_sends_canaries in the provider block.", envPlanSendsCanaries, v))
		}
	}
	if rt.ledgerDSN != "" {
		for _, p := range ledgerExposure(rt.ledgerDSN, getenv) {
			diags.AddAttributeWarning(path.Root("ledger_dsn"), p.summary, p.detail)
		}
	}

	if in.BrokersUnknown {
		rt.allUnknown = true
		diags.AddAttributeWarning(path.Root("brokers"), "Brokers not known until apply",
			"The brokers map depends on values that are known only after apply. Plan-time checks (preflight) against the brokers are skipped until it is known; they run at apply.")
		return rt, diags
	}

	brokers, source := in.Brokers, fromConfig
	if brokers == nil {
		raw := strings.TrimSpace(getenv(envBrokers))
		if raw == "" {
			diags.AddAttributeError(path.Root("brokers"), "No brokers configured",
				fmt.Sprintf("Set brokers in the provider block, for example brokers = { dc1 = { management_url = %q, amqp_urls = [\"amqp://127.0.0.1:5672\"], username = \"transfer\", password = var.dc1_password } }, or export %s with a JSON object of the same shape.", exampleManagementURL, envBrokers))
			return rt, diags
		}
		parsed, err := parseBrokersJSON(raw)
		if err != nil {
			diags.AddError("Invalid "+envBrokers, fmt.Sprintf("%s is set but is not a valid brokers object: %v. It must be a JSON object keyed by broker name, for example {\"dc1\": {\"management_url\": %q, \"username\": \"transfer\"}}, with the attribute names of the brokers block.", envBrokers, err, exampleManagementURL))
			return rt, diags
		}
		brokers, source = parsed, fromEnv
	}
	if len(brokers) == 0 {
		where := "brokers in the provider block is empty"
		if source == fromEnv {
			where = envBrokers + " holds an empty object"
		}
		diags.AddAttributeError(path.Root("brokers"), "No brokers configured",
			fmt.Sprintf("%s. Add at least one broker, for example dc1 = { management_url = %q }.", where, exampleManagementURL))
		return rt, diags
	}

	names := make([]string, 0, len(brokers))
	for name := range brokers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := brokers[name]
		if s.isUnknown("") {
			rt.pending[name] = true
			diags.AddAttributeWarning(brokerAttrPath(name, ""),
				fmt.Sprintf("Broker %q not known until apply", name),
				fmt.Sprintf("brokers[%q] depends on values known only after apply. Plan-time checks (preflight) against broker %q are skipped until it is known; they run at apply.", name, name))
			continue
		}
		cfg, problems := resolveBroker(name, s, getenv, readFile)
		for _, p := range problems {
			// Terraform shows a provider attribute error at the provider block, not at the
			// attribute, so the detail itself starts with the path.
			switch {
			case source == fromEnv && p.warning:
				diags.AddWarning(p.summary, fmt.Sprintf("In %s, %s: %s", envBrokers, p.path, p.detail))
			case source == fromEnv:
				diags.AddError(p.summary, fmt.Sprintf("In %s, %s: %s", envBrokers, p.path, p.detail))
			case p.warning:
				diags.AddAttributeWarning(p.path, p.summary, fmt.Sprintf("%s: %s", p.path, p.detail))
			default:
				diags.AddAttributeError(p.path, p.summary, fmt.Sprintf("%s: %s", p.path, p.detail))
			}
		}
		if unknown := s.unknownAttrs(); len(unknown) > 0 {
			rt.pending[name] = true
			diags.AddAttributeWarning(brokerAttrPath(name, unknown[0]),
				fmt.Sprintf("Broker %q not fully known until apply", name),
				fmt.Sprintf("%s of brokers[%q] depend on values known only after apply. Plan-time checks (preflight) against broker %q are skipped until they are known; they run at apply.", strings.Join(unknown, ", "), name, name))
			continue
		}
		if !hasErrors(problems) {
			rt.configs[name] = cfg
			rt.secrets = append(rt.secrets, secretsOfBroker(cfg, s, readFile)...)
		}
	}
	return rt, diags
}

// parseBrokersJSON reads ARTEMIS_BROKERS, refusing unknown attribute names so a typo is caught.
func parseBrokersJSON(raw string) (map[string]brokerSettings, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var brokers map[string]brokerSettings
	if err := dec.Decode(&brokers); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON object")
	}
	if brokers == nil {
		return nil, fmt.Errorf("null is not an object")
	}
	return brokers, nil
}
