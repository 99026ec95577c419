package artemis

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
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

	// ConnectTimeout bounds dialing a broker. Zero means DefaultConnectTimeout (10s).
	ConnectTimeout time.Duration

	// RequestTimeout bounds one management request. Zero means DefaultRequestTimeout (60s), the
	// broker's own limit for waiting on its management lock.
	RequestTimeout time.Duration
}

// Defaults for the zero values of Config's timeouts.
const (
	// DefaultConnectTimeout bounds dialing a broker (TCP, TLS and AMQP open).
	DefaultConnectTimeout = 10 * time.Second
	// DefaultRequestTimeout bounds one management request: the broker's own limit for waiting
	// on its management lock.
	DefaultRequestTimeout = 60 * time.Second
)

func (c Config) connectTimeout() time.Duration {
	if c.ConnectTimeout > 0 {
		return c.ConnectTimeout
	}
	return DefaultConnectTimeout
}

func (c Config) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return DefaultRequestTimeout
}

// validate checks the configuration without contacting the broker. The error joins one
// *ConfigError per problem (see Problems), each naming the field.
func (c Config) validate() error {
	var errs []error
	for _, p := range c.Problems() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// TLSOptions are the TLS settings an operator gives, as PEM text.
type TLSOptions struct {
	CAPEM              string
	ClientCertPEM      string
	ClientKeyPEM       string
	ServerName         string
	InsecureSkipVerify bool
}

// Config builds a tls.Config. Verification stays on unless InsecureSkipVerify is set. Its errors
// are *ConfigError.
func (o TLSOptions) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // opt-in only
	if o.CAPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(o.CAPEM)) {
			return nil, &ConfigError{Field: fieldCAPEM, Err: errors.New("holds no PEM certificate")}
		}
		cfg.RootCAs = pool
	}
	if err := CheckClientKeyPair(o.ClientCertPEM, o.ClientKeyPEM); err != nil {
		return nil, err
	}
	if o.ClientCertPEM != "" {
		pair, err := tls.X509KeyPair([]byte(o.ClientCertPEM), []byte(o.ClientKeyPEM))
		if err != nil {
			return nil, &ConfigError{Field: fieldClientCertPEM, Err: err}
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
