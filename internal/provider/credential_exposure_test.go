package provider

import (
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// TestBrokerExposure_WarnsWhereAPasswordWouldCrossTheNetworkInClear: a password is warned of on
// the attribute that sends it in clear to a host other than this machine, and only there.
func TestBrokerExposure_WarnsWhereAPasswordWouldCrossTheNetworkInClear(t *testing.T) {
	const remote = "http://broker.example.com:8161/console/jolokia"
	cases := []struct {
		name string
		cfg  artemis.Config
		// want lists the attributes warned of, each with a phrase of its detail.
		want map[string]string
	}{
		{name: "http management with a password to a remote host",
			cfg:  artemis.Config{ManagementURL: remote, Username: "u", Password: "p"},
			want: map[string]string{"management_url": "broker.example.com"}},
		{name: "password in the management URL",
			cfg:  artemis.Config{ManagementURL: "http://u:p@10.0.0.5:8161/console/jolokia"},
			want: map[string]string{"management_url": "10.0.0.5"}},
		{name: "https management", cfg: artemis.Config{ManagementURL: "https://broker.example.com:8443/console/jolokia", Username: "u", Password: "p"}},
		{name: "http management without a password", cfg: artemis.Config{ManagementURL: remote}},
		{name: "http management on 127.0.0.1", cfg: artemis.Config{ManagementURL: "http://127.0.0.1:8161/console/jolokia", Username: "u", Password: "p"}},
		{name: "http management on localhost", cfg: artemis.Config{ManagementURL: "http://localhost:8161/console/jolokia", Username: "u", Password: "p"}},
		{name: "http management on ::1", cfg: artemis.Config{ManagementURL: "http://[::1]:8161/console/jolokia", Username: "u", Password: "p"}},
		{name: "http management on 127.1.2.3 (all of 127/8 is loopback)", cfg: artemis.Config{ManagementURL: "http://127.1.2.3:8161/console/jolokia", Username: "u", Password: "p"}},
		{name: "amqp with a username to remote hosts, named once each",
			cfg: artemis.Config{ManagementURL: "https://b1:8443/console/jolokia", Username: "u", Password: "p",
				AMQPURLs: []string{"amqp://b2:5672", "amqps://b3:5671", "amqp://b1:5672", "amqp://b1:61616"}},
			want: map[string]string{"amqp_urls": "b1, b2 over amqp://"}},
		{name: "amqp with credentials in the URL",
			cfg:  artemis.Config{ManagementURL: "https://b1:8443/console/jolokia", AMQPURLs: []string{"amqp://u:p@b2:5672"}},
			want: map[string]string{"amqp_urls": "b2"}},
		{name: "amqp without credentials (SASL ANONYMOUS)",
			cfg: artemis.Config{ManagementURL: "https://b1:8443/console/jolokia", AMQPURLs: []string{"amqp://b2:5672"}}},
		{name: "amqp on loopback", cfg: artemis.Config{ManagementURL: "https://b1:8443/console/jolokia", Username: "u", Password: "p",
			AMQPURLs: []string{"amqp://127.0.0.1:5672", "amqp://localhost:5672"}}},
		{name: "amqps only", cfg: artemis.Config{ManagementURL: "https://b1:8443/console/jolokia", Username: "u", Password: "p",
			AMQPURLs: []string{"amqps://b1:5671"}}},
		{name: "both in clear", cfg: artemis.Config{ManagementURL: remote, Username: "u", Password: "p", AMQPURLs: []string{"amqp://b2:5672"}},
			want: map[string]string{"management_url": "HTTP basic", "amqp_urls": "SASL PLAIN"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, p := range brokerExposure("dc1", tc.cfg) {
				if !p.warning {
					t.Errorf("%s: an error, want a warning", p.path)
				}
				got[p.path.String()] = p.detail
			}
			if len(got) != len(tc.want) {
				t.Errorf("warnings on %v, want on %v", keys(got), keys(tc.want))
			}
			for attr, phrase := range tc.want {
				p := brokerAttrPath("dc1", attr).String()
				detail, ok := got[p]
				switch {
				case !ok:
					t.Errorf("no warning on %s", p)
				case !strings.Contains(detail, phrase):
					t.Errorf("the warning on %s does not say %q: %s", p, phrase, detail)
				case strings.Contains(detail, `"p"`) || strings.Contains(detail, "u:p"):
					t.Errorf("the warning on %s shows the password: %s", p, detail)
				}
			}
		})
	}
}

// TestLedgerExposure_WarnsUnlessARemoteServerIsVerified: the ledger's DSN is warned of when it
// reaches a server other than this machine without sslmode=verify-full or verify-ca, in either
// form of DSN, with PGSSLMODE and PGHOST as pgx reads them.
func TestLedgerExposure_WarnsUnlessARemoteServerIsVerified(t *testing.T) {
	cases := []struct {
		name, dsn string
		env       map[string]string
		// want is a phrase of the warning's detail; "" means no warning.
		want string
	}{
		{name: "URL without sslmode to a remote host", dsn: "postgres://u:pw@db.example.com:5432/ledger", want: "default sslmode=prefer"},
		{name: "URL with sslmode=require", dsn: "postgres://u:pw@db.example.com/ledger?sslmode=require", want: "does not verify the server (sslmode=require)"},
		{name: "URL with sslmode=disable", dsn: "postgresql://u:pw@10.1.2.3/ledger?sslmode=disable", want: "in clear (sslmode=disable)"},
		{name: "URL with sslmode=verify-full", dsn: "postgres://u:pw@db.example.com/ledger?sslmode=verify-full"},
		{name: "URL with sslmode=verify-ca", dsn: "postgres://u:pw@db.example.com/ledger?sslmode=verify-ca"},
		{name: "URL to localhost", dsn: "postgres://u:pw@localhost:5432/ledger"},
		{name: "URL to 127.0.0.1", dsn: "postgres://u:pw@127.0.0.1:5432/ledger?sslmode=disable"},
		{name: "URL to [::1]", dsn: "postgres://u:pw@[::1]:5432/ledger"},
		{name: "URL with several hosts, one remote", dsn: "postgres://u:pw@127.0.0.1:5432,db2.example.com:5433/ledger", want: "db2.example.com"},
		{name: "URL with a socket host parameter", dsn: "postgres://u:pw@/ledger?host=/var/run/postgresql"},
		{name: "URL without a host", dsn: "postgres:///ledger"},
		{name: "URL without a host, PGHOST remote", dsn: "postgres:///ledger", env: map[string]string{"PGHOST": "db.example.com"}, want: "db.example.com"},
		{name: "URL without sslmode, PGSSLMODE=verify-full", dsn: "postgres://u:pw@db.example.com/ledger", env: map[string]string{"PGSSLMODE": "verify-full"}},
		{name: "URL's sslmode wins over PGSSLMODE", dsn: "postgres://u:pw@db.example.com/ledger?sslmode=prefer", env: map[string]string{"PGSSLMODE": "verify-full"}, want: "sslmode=prefer"},
		{name: "key=value to a remote host", dsn: "host=db.example.com user=u password=pw dbname=ledger", want: "db.example.com"},
		{name: "key=value verified", dsn: "host=db.example.com user=u password='p w' sslmode=verify-full dbname=ledger"},
		{name: "key=value with a quoted password before sslmode", dsn: `host=db.example.com password='it\'s sslmode=verify-full' sslmode=require`, want: "sslmode=require"},
		{name: "key=value on a socket", dsn: "host=/tmp user=u dbname=ledger"},
		{name: "key=value by hostaddr", dsn: "hostaddr=192.0.2.10 user=u dbname=ledger", want: "192.0.2.10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ledgerExposure(tc.dsn, func(name string) string { return tc.env[name] })
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("want no warning, got %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one warning, got %d: %+v", len(got), got)
			}
			p := got[0]
			if !p.warning || p.path.String() != "ledger_dsn" {
				t.Errorf("want a warning on ledger_dsn, got warning=%v on %s", p.warning, p.path)
			}
			if !strings.Contains(p.detail, tc.want) || !strings.Contains(p.detail, "sslmode=verify-full") {
				t.Errorf("the detail does not say %q and how to fix it: %s", tc.want, p.detail)
			}
			if strings.Contains(p.detail, "pw") || strings.Contains(p.detail, "p w") {
				t.Errorf("the detail shows the password: %s", p.detail)
			}
		})
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
