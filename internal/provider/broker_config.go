package provider

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/provider/validators"
)

// One broker's settings become an artemis.Config here: its endpoints, credentials, timeouts and
// TLS material checked without dialing, and its secrets listed for masking in logs.

// resolveBroker turns one broker's settings into an artemis.Config, filling username and
// password from ARTEMIS_<NAME>_USERNAME / _PASSWORD when they are not set.
func resolveBroker(name string, s brokerSettings, getenv environment, readFile fileReader) (artemis.Config, []problem) {
	var problems []problem
	add := func(attr, summary, detail string) {
		problems = append(problems, problem{path: brokerAttrPath(name, attr), summary: summary, detail: detail})
	}
	addRefusal := func(attr string, r *validators.Refusal) {
		if r != nil {
			add(attr, r.Summary, r.Detail)
		}
	}
	addRefusal("", brokerKeyRule(name))

	cfg := artemis.Config{
		Name:             name,
		ManagementURL:    managementURL(s.ManagementURL),
		ManagementOrigin: strings.TrimSpace(s.ManagementOrigin),
		BrokerName:       s.BrokerName,
		Username:         s.Username,
		Password:         s.Password,
	}

	if !s.isUnknown("management_url") {
		addRefusal("management_url", managementURLRule(s.ManagementURL))
	}

	if !s.isUnknown("amqp_urls") {
		for i, raw := range s.AMQPURLs {
			if r := amqpURLRule(raw); r != nil {
				problems = append(problems, problem{path: brokerAttrPath(name, "amqp_urls").AtListIndex(i), summary: r.Summary, detail: r.Detail})
				continue
			}
			cfg.AMQPURLs = append(cfg.AMQPURLs, strings.TrimSpace(raw))
		}
	}

	if !s.isUnknown("management_origin") {
		addRefusal("management_origin", managementOriginRule(s.ManagementOrigin))
	}

	problems = append(problems, resolveCredentials(name, s, &cfg, getenv)...)

	for _, t := range []struct {
		attr   string
		raw    string
		target *time.Duration
	}{
		{"connect_timeout", s.ConnectTimeout, &cfg.ConnectTimeout},
		{"request_timeout", s.RequestTimeout, &cfg.RequestTimeout},
	} {
		if s.isUnknown(t.attr) {
			continue
		}
		d, r := parseTimeout(t.raw)
		addRefusal(t.attr, r)
		*t.target = d
	}

	if s.TLS != nil {
		tlsConfig, tlsProblems := resolveTLS(name, *s.TLS, s, readFile)
		problems = append(problems, tlsProblems...)
		cfg.TLS = tlsConfig
		if s.TLS.InsecureSkipVerify && !s.isUnknown("tls.insecure_skip_verify") {
			problems = append(problems, problem{
				path:    brokerAttrPath(name, "tls.insecure_skip_verify"),
				summary: "TLS certificate verification is off",
				detail: fmt.Sprintf("broker %q accepts any certificate on its amqps:// and https:// endpoints, so whoever can intercept the connection "+
					"(a man in the middle) can pose as the broker and read the username and password the provider logs in with and every message it moves. "+
					"Set tls.ca_cert_file (or tls.ca_cert_pem) to the CA that signed the broker's certificate, with tls.server_name if the certificate "+
					"names another host, and remove insecure_skip_verify.", name),
				warning: true,
			})
		}
	}

	if len(s.unknown) == 0 {
		problems = append(problems, brokerExposure(name, cfg)...)
	}

	// The client's own check guards against a gap between its rules and ours.
	if !hasErrors(problems) && len(s.unknown) == 0 {
		for _, p := range cfg.Problems() {
			problems = append(problems, problem{path: configErrorPath(name, p), summary: "Invalid broker configuration", detail: fmt.Sprintf("%v.", p)})
		}
	}
	return cfg, problems
}

// configErrorPath is the attribute of broker name that a client configuration error names. The
// AMQP URL index holds because the check runs only when every configured URL was kept.
func configErrorPath(name string, e *artemis.ConfigError) path.Path {
	switch e.Field {
	case artemis.FieldManagementURL:
		return brokerAttrPath(name, "management_url")
	case artemis.FieldAMQPURLs:
		return brokerAttrPath(name, "amqp_urls").AtListIndex(e.Index)
	case artemis.FieldPassword:
		return brokerAttrPath(name, "password")
	}
	return brokerAttrPath(name, "")
}

// resolveCredentials fills username and password from the environment and checks they pair up.
func resolveCredentials(name string, s brokerSettings, cfg *artemis.Config, getenv environment) []problem {
	userVar, passVar := brokerEnvName(name, "USERNAME"), brokerEnvName(name, "PASSWORD")
	if s.isUnknown("username") || s.isUnknown("password") {
		return nil
	}
	userFrom, passFrom := "sets username", "sets password"
	if cfg.Username == "" {
		if v := getenv(userVar); v != "" {
			cfg.Username, userFrom = v, "takes its username from "+userVar
		}
	}
	if cfg.Password == "" {
		if v := getenv(passVar); v != "" {
			cfg.Password, passFrom = v, "takes its password from "+passVar
		}
	}
	switch {
	case cfg.Username != "" && cfg.Password == "":
		return []problem{{
			path:    brokerAttrPath(name, "password"),
			summary: "Missing password",
			detail:  fmt.Sprintf("broker %q %s but has no password. Set password (for example password = var.%s_password) or export %s.", name, userFrom, envSafe(name), passVar),
		}}
	case cfg.Username == "" && cfg.Password != "":
		return []problem{{
			path:    brokerAttrPath(name, "username"),
			summary: "Missing username",
			detail:  fmt.Sprintf("broker %q %s but has no username. Set username or export %s.", name, passFrom, userVar),
		}}
	}
	return nil
}

// envSafe makes a broker name usable in an example variable name.
func envSafe(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(brokerEnvName(name, ""), "ARTEMIS_"), "_"))
}

// resolveTLS reads the PEM material of a tls block (text or files) and builds a tls.Config.
func resolveTLS(name string, t tlsSettings, s brokerSettings, readFile fileReader) (*tls.Config, []problem) {
	var problems []problem
	add := func(attr, summary, detail string) {
		problems = append(problems, problem{path: brokerAttrPath(name, "tls."+attr), summary: summary, detail: detail})
	}
	for attr := range s.unknown {
		if strings.HasPrefix(attr, "tls") {
			return nil, nil // built at apply, when every value is known
		}
	}

	// pemOf returns the PEM text given inline or in a file, and the attribute it came from.
	pemOf := func(what, pemAttr, pemText, fileAttr, file string) (string, string) {
		switch {
		case pemText != "" && file != "":
			r := tlsConflict(what, pemAttr, fileAttr)
			add(fileAttr, r.Summary, r.Detail)
			return "", ""
		case file != "":
			data, err := readFile(file)
			if err != nil {
				add(fileAttr, "Cannot read TLS file",
					fmt.Sprintf("reading %q: %v. Check the path (a relative path is resolved from the directory Terraform runs in) and its permissions, or give the PEM text in tls.%s instead.", file, err, pemAttr))
				return "", ""
			}
			if len(bytes.TrimSpace(data)) == 0 {
				add(fileAttr, "Empty TLS file",
					fmt.Sprintf("%q is empty. Point it at a PEM file holding the %s.", file, what))
				return "", ""
			}
			return string(data), fileAttr
		default:
			return pemText, pemAttr
		}
	}

	opts := artemis.TLSOptions{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	var caAttr, certAttr, keyAttr string
	opts.CAPEM, caAttr = pemOf("CA certificate", "ca_cert_pem", t.CACertPEM, "ca_cert_file", t.CACertFile)
	opts.ClientCertPEM, certAttr = pemOf("client certificate", "client_cert_pem", t.ClientCertPEM, "client_cert_file", t.ClientCertFile)
	opts.ClientKeyPEM, keyAttr = pemOf("client private key", "client_key_pem", t.ClientKeyPEM, "client_key_file", t.ClientKeyFile)
	if len(problems) > 0 {
		return nil, problems
	}

	if opts.CAPEM != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(opts.CAPEM)) {
		add(caAttr, "Invalid CA certificate",
			"holds no PEM certificate. Give the CA certificate that signed the broker's certificate, starting with -----BEGIN CERTIFICATE-----.")
	}
	// The client's own pairing check; its reason never quotes the key.
	var pairErr *artemis.ConfigError
	if errors.As(artemis.CheckClientKeyPair(opts.ClientCertPEM, opts.ClientKeyPEM), &pairErr) {
		switch {
		case errors.Is(pairErr, artemis.ErrRequired) && pairErr.Field == artemis.FieldClientKeyPEM:
			add("client_key_pem", "Missing client key",
				fmt.Sprintf("not set, but a client certificate is (tls.%s). Set tls.client_key_pem or tls.client_key_file.", certAttr))
		case errors.Is(pairErr, artemis.ErrRequired):
			add("client_cert_pem", "Missing client certificate",
				fmt.Sprintf("not set, but a client key is (tls.%s). Set tls.client_cert_pem or tls.client_cert_file.", keyAttr))
		default:
			add(certAttr, "Invalid client certificate or key",
				fmt.Sprintf("tls.%s and tls.%s do not form a key pair: %v. Give the PEM certificate and its matching unencrypted private key.", certAttr, keyAttr, pairErr.Err))
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	cfg, err := opts.Config()
	if err != nil {
		add("", "Invalid TLS settings", fmt.Sprintf("%v.", err))
		return nil, problems
	}
	return cfg, nil
}

// checkEndpoint returns why raw is not a URL with one of schemes and a host, or "": the client's
// own check (artemis.CheckURL), whose reason quotes the URL without its password.
func checkEndpoint(raw string, schemes ...string) string {
	if err := artemis.CheckURL(raw, schemes...); err != nil {
		return err.Error()
	}
	return ""
}

// secretsOfBroker lists the secret strings of one broker, for masking in logs: its password,
// any password inside its URLs, and its client key, inline or from its file (read again here,
// as the tls.Config built from it no longer holds the PEM text).
func secretsOfBroker(cfg artemis.Config, s brokerSettings, readFile fileReader) []string {
	var out []string
	if cfg.Password != "" {
		out = append(out, cfg.Password)
	}
	for _, raw := range append([]string{cfg.ManagementURL, cfg.ManagementOrigin}, cfg.AMQPURLs...) {
		if u, err := url.Parse(raw); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && p != "" {
				out = append(out, p)
			}
		}
	}
	if s.TLS != nil {
		if s.TLS.ClientKeyPEM != "" {
			out = append(out, secretsOfKey(s.TLS.ClientKeyPEM)...)
		}
		if s.TLS.ClientKeyFile != "" {
			if key, err := readFile(s.TLS.ClientKeyFile); err == nil && len(bytes.TrimSpace(key)) > 0 {
				out = append(out, secretsOfKey(string(key))...)
			}
		}
	}
	return out
}

// secretsOfKey lists a PEM private key and each line of its body: a log line may quote the key
// with its newlines escaped, or one line of it, and either is a leak.
func secretsOfKey(keyPEM string) []string {
	out := []string{keyPEM, strings.TrimSpace(keyPEM)}
	for _, line := range strings.Split(keyPEM, "\n") {
		if line = strings.TrimSpace(line); len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	return out
}

// secretsOfDSN lists the ledger DSN and the password inside it, for masking in logs. The DSN
// may be a URL (postgres://user:pw@host/db) or key=value pairs (host=h password=pw).
func secretsOfDSN(dsn string) []string {
	out := []string{dsn}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		}
	}
	for _, field := range strings.Fields(dsn) {
		if k, v, ok := strings.Cut(field, "="); ok && strings.EqualFold(k, "password") {
			if v = strings.Trim(v, "'"); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
