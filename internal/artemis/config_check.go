package artemis

import (
	"crypto/tls"
	"fmt"
	"net/url"
	"strings"
)

// The Config and TLSOptions fields a ConfigError names. A caller maps them to its own names for
// them (the provider: management_url, amqp_urls[i], password, tls.*).
const (
	FieldManagementURL = "ManagementURL"
	FieldAMQPURLs      = "AMQPURLs" // with ConfigError.Index
	FieldPassword      = "Password"
	fieldCAPEM         = "CAPEM"
	fieldClientCertPEM = "ClientCertPEM"
	FieldClientKeyPEM  = "ClientKeyPEM"
)

// fieldWords are the Field constants in words, as ConfigError.Error says them.
var fieldWords = map[string]string{
	FieldManagementURL: "management URL",
	FieldPassword:      "password",
	fieldCAPEM:         "CA certificate",
	fieldClientCertPEM: "client certificate",
	FieldClientKeyPEM:  "client private key",
}

// Problems lists every value of the configuration that cannot work, one *ConfigError each, in
// field order; none when the configuration can be used. New refuses a configuration with any
// (validate joins them).
func (c Config) Problems() []*ConfigError {
	var problems []*ConfigError
	if c.ManagementURL == "" {
		problems = append(problems, &ConfigError{Field: FieldManagementURL, Err: ErrRequired})
	} else if err := CheckURL(c.ManagementURL, "http", "https"); err != nil {
		problems = append(problems, &ConfigError{Field: FieldManagementURL, Err: err})
	}
	for i, u := range c.AMQPURLs {
		if err := CheckURL(u, "amqp", "amqps"); err != nil {
			problems = append(problems, &ConfigError{Field: FieldAMQPURLs, Index: i, Err: err})
		}
	}
	if c.Username != "" && c.Password == "" {
		problems = append(problems, &ConfigError{Field: FieldPassword, Err: fmt.Errorf("%w when a username is set", ErrRequired)})
	}
	return problems
}

// CheckURL returns why raw is not a URL with one of schemes (compared without case) and a host,
// or nil. The reason quotes the URL with its password redacted.
func CheckURL(raw string, schemes ...string) error {
	want := strings.Join(schemes, ":// or ") + "://"
	shown := redactURL(raw)
	if !strings.Contains(raw, "://") {
		// host:port without a scheme is the usual slip; url.Parse would only say "first path
		// segment in URL cannot contain colon".
		return fmt.Errorf("%q must start with %s", shown, want)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL (%w)", shown, urlParseReason(err))
	}
	ok := false
	for _, s := range schemes {
		if strings.EqualFold(u.Scheme, s) {
			ok = true
		}
	}
	switch {
	case !ok:
		return fmt.Errorf("%q must start with %s", shown, want)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%q has no host", shown)
	}
	return nil
}

// CheckClientKeyPair returns why a client certificate and private key (PEM text) cannot be used
// together, or nil; both empty is fine (no client certificate). The error is a *ConfigError: for
// FieldClientKeyPEM or fieldClientCertPEM with ErrRequired when only the other is given, or for
// fieldClientCertPEM with crypto/tls's reason (which never quotes the key) when they do not form
// a key pair.
func CheckClientKeyPair(certPEM, keyPEM string) error {
	switch {
	case certPEM != "" && keyPEM == "":
		return &ConfigError{Field: FieldClientKeyPEM, Err: fmt.Errorf("%w with a client certificate", ErrRequired)}
	case certPEM == "" && keyPEM != "":
		return &ConfigError{Field: fieldClientCertPEM, Err: fmt.Errorf("%w with a client private key", ErrRequired)}
	case certPEM != "":
		if _, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM)); err != nil {
			return &ConfigError{Field: fieldClientCertPEM, Err: err}
		}
	}
	return nil
}
