package artemis

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config says how to reach one broker. The zero value of each optional field has a documented
// default.
type Config struct {
	// Name is the logical name the operator gave this broker (the key in the provider's broker
	// map). It appears in every error so that a message names the broker at fault.
	Name string

	// AMQPURLs are amqp:// or amqps:// endpoints, tried in order when connecting.
	AMQPURLs []string

	// ManagementURL is the Jolokia endpoint, e.g. http://host:8161/console/jolokia.
	ManagementURL string

	Username string
	Password string

	// TLS is used for amqps:// and https:// endpoints. Nil means the system roots, with
	// verification on.
	TLS *tls.Config

	// ManagementOrigin is sent as the Origin header of Jolokia requests. Brokers made by
	// `artemis create` refuse requests without an Origin matching their http-host. Empty means
	// scheme://host of ManagementURL, which matches that default.
	ManagementOrigin string

	// BrokerName is the broker's JMX name (broker="..." in its MBean names). Empty means it is
	// discovered on first use.
	BrokerName string

	// ConnectTimeout bounds dialing a broker. Zero means 10s.
	ConnectTimeout time.Duration

	// RequestTimeout bounds one management request. Zero means 60s, the broker's own limit for
	// waiting on its management lock.
	RequestTimeout time.Duration
}

func (c Config) connectTimeout() time.Duration {
	if c.ConnectTimeout > 0 {
		return c.ConnectTimeout
	}
	return 10 * time.Second
}

func (c Config) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return 60 * time.Second
}

// Validate checks the configuration without contacting the broker. Its errors name the field.
func (c Config) Validate() error {
	var errs []error
	if c.ManagementURL == "" {
		errs = append(errs, errors.New("management_url is required"))
	} else if err := checkURL(c.ManagementURL, "http", "https"); err != nil {
		errs = append(errs, fmt.Errorf("management_url: %w", err))
	}
	for i, u := range c.AMQPURLs {
		if err := checkURL(u, "amqp", "amqps"); err != nil {
			errs = append(errs, fmt.Errorf("amqp_urls[%d]: %w", i, err))
		}
	}
	if c.Username != "" && c.Password == "" {
		errs = append(errs, errors.New("password is required when username is set"))
	}
	return errors.Join(errs...)
}

// checkURL returns why raw is not a URL with one of schemes and a host. The URL is quoted with
// its password redacted.
func checkURL(raw string, schemes ...string) error {
	shown := RedactURL(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", shown, URLParseReason(err))
	}
	for _, s := range schemes {
		if strings.EqualFold(u.Scheme, s) {
			if u.Host == "" {
				return fmt.Errorf("%q has no host", shown)
			}
			return nil
		}
	}
	return fmt.Errorf("%q must start with %s://", shown, strings.Join(schemes, ":// or "))
}

// TLSOptions are the TLS settings an operator gives, as PEM text.
type TLSOptions struct {
	CAPEM              string
	ClientCertPEM      string
	ClientKeyPEM       string
	ServerName         string
	InsecureSkipVerify bool
}

// Config builds a tls.Config. Verification stays on unless InsecureSkipVerify is set.
func (o TLSOptions) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // opt-in only
	if o.CAPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(o.CAPEM)) {
			return nil, errors.New("ca_cert: no PEM certificate found")
		}
		cfg.RootCAs = pool
	}
	if (o.ClientCertPEM == "") != (o.ClientKeyPEM == "") {
		return nil, errors.New("client_cert and client_key must be given together")
	}
	if o.ClientCertPEM != "" {
		pair, err := tls.X509KeyPair([]byte(o.ClientCertPEM), []byte(o.ClientKeyPEM))
		if err != nil {
			return nil, fmt.Errorf("client_cert/client_key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
