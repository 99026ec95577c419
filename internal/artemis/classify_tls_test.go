package artemis_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// These tests make real TLS handshakes against local servers, so that the failures are what
// crypto/tls returns, and check that each is recognised by its type and explained as before.

// trusting is a TLS configuration that trusts srv's certificate, for serverName.
func trusting(srv *httptest.Server, serverName string) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}
}

func tlsTestContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// checkError fails unless err matches want (and not the other sentinel) and says every phrase.
func checkError(t *testing.T, err, want, not error, phrases ...string) {
	t.Helper()
	if !errors.Is(err, want) || errors.Is(err, not) {
		t.Fatalf("want an error matching %v and not %v, got %v", want, not, err)
	}
	for _, p := range phrases {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error does not say %q: %v", p, err)
		}
	}
}

func managementOver(t *testing.T, srv *httptest.Server, cfg *tls.Config) error {
	t.Helper()
	c, err := artemis.New(artemis.Config{Name: "src", ManagementURL: srv.URL + "/console/jolokia", TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.BrokerInfo(tlsTestContext(t))
	return err
}

func amqpsTo(t *testing.T, srv *httptest.Server, cfg *tls.Config) error {
	t.Helper()
	url := "amqps://" + srv.Listener.Addr().String()
	c, err := artemis.New(artemis.Config{Name: "src", ManagementURL: "http://127.0.0.1:1/console/jolokia", AMQPURLs: []string{url}, TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.Connect(tlsTestContext(t))
	if err == nil {
		_ = conn.Close()
	}
	return err
}

func TestManagement_CertificateOfAnUnknownCAIsUntrustedCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	err := managementOver(t, srv, nil)
	checkError(t, err, artemis.ErrUntrustedCertificate, artemis.ErrUnreachable,
		"the TLS certificate of "+srv.URL+"/console/jolokia is not trusted", "tls.ca_cert_file")
	var authErr x509.UnknownAuthorityError
	if !errors.As(err, &authErr) {
		t.Errorf("the error does not keep crypto/x509's reason: %v", err)
	}
}

func TestManagement_CertificateForAnotherHostIsUntrustedCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	checkError(t, managementOver(t, srv, trusting(srv, "broker.invalid")), artemis.ErrUntrustedCertificate, artemis.ErrUnreachable,
		"is not trusted")
}

// A server that requires a client certificate refuses a client with a TLS alert: "bad
// certificate" for one it does not trust, "certificate required" (TLS 1.3) for none; TLS 1.2
// says "handshake failure" for none, which names no certificate and stays ErrUnreachable.
// The alert arrives during the handshake in TLS 1.2, on the first read in TLS 1.3.
func TestManagement_ClientCertificateRefusedIsUntrustedCertificate(t *testing.T) {
	certPEM, keyPEM := testenv.SelfSignedPEM(t) // self-signed: the server trusts no CA for it
	for _, tc := range []struct {
		name      string
		version   uint16
		withCert  bool
		want, not error
		phrase    string
	}{
		{"untrusted certificate, TLS 1.2", tls.VersionTLS12, true, artemis.ErrUntrustedCertificate, artemis.ErrUnreachable, "is not trusted"},
		{"untrusted certificate, TLS 1.3", tls.VersionTLS13, true, artemis.ErrUntrustedCertificate, artemis.ErrUnreachable, "is not trusted"},
		{"no certificate, TLS 1.3", tls.VersionTLS13, false, artemis.ErrUntrustedCertificate, artemis.ErrUnreachable, "is not trusted"},
		{"no certificate, TLS 1.2", tls.VersionTLS12, false, artemis.ErrUnreachable, artemis.ErrUntrustedCertificate, "is unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.NotFoundHandler())
			srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: x509.NewCertPool(), MaxVersion: tc.version}
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.StartTLS()
			defer srv.Close()
			cfg := trusting(srv, "example.com")
			if tc.withCert {
				pair, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Certificates = []tls.Certificate{pair}
			}
			checkError(t, managementOver(t, srv, cfg), tc.want, tc.not, tc.phrase)
		})
	}
}

// A TLS failure that is not about a certificate (no protocol version in common) stays
// ErrUnreachable.
func TestManagement_OtherTLSFailureIsUnreachable(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	cfg := trusting(srv, "example.com")
	cfg.MaxVersion = tls.VersionTLS12
	checkError(t, managementOver(t, srv, cfg), artemis.ErrUnreachable, artemis.ErrUntrustedCertificate, "is unreachable")
}

func TestConnect_CertificateOfAnUnknownCAIsUntrustedCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	checkError(t, amqpsTo(t, srv, nil), artemis.ErrUntrustedCertificate, artemis.ErrUnreachable,
		"the broker's TLS certificate was not trusted", "tls.ca_cert_pem")
}

func TestConnect_CertificateForAnotherHostIsUntrustedCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	checkError(t, amqpsTo(t, srv, trusting(srv, "broker.invalid")), artemis.ErrUntrustedCertificate, artemis.ErrUnreachable,
		"not valid for this host name", "tls.server_name")
}

// An amqps:// URL on a port that answers in plain text (here HTTP) says to use amqp://.
func TestConnect_PortWithoutTLSIsUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	checkError(t, amqpsTo(t, srv, nil), artemis.ErrUnreachable, artemis.ErrUntrustedCertificate,
		"the port does not speak TLS: use amqp://")
}
