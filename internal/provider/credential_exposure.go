package provider

// Where a broker's password or the ledger's credentials would cross the network unprotected: in
// clear, or over TLS that does not verify the server. Each is a plan warning on the attribute
// that decides it; the decisions are pure functions of the resolved configuration.

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// isLoopbackHost reports whether host (a name or an address, without a port) stays on this
// machine: localhost, or a loopback address. Other names are taken as remote without a DNS
// lookup, so the answer does not depend on the resolver of the machine that plans.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// brokerExposure finds where cfg (a resolved broker, with the environment's credentials) would
// send its password in clear to a host other than this machine: HTTP basic authentication over
// an http:// management URL, and SASL PLAIN over an amqp:// URL. A TLS endpoint that does not
// verify the broker's certificate is warned of on tls.insecure_skip_verify.
func brokerExposure(name string, cfg artemis.Config) []problem {
	var out []problem
	if u, err := url.Parse(cfg.ManagementURL); err == nil && strings.EqualFold(u.Scheme, "http") &&
		!isLoopbackHost(u.Hostname()) && (cfg.Password != "" || urlHasPassword(u)) {
		out = append(out, problem{
			path:    brokerAttrPath(name, "management_url"),
			summary: "Management password sent in clear",
			detail: fmt.Sprintf("broker %q's management_url is http:// to %s, so the password goes in clear (HTTP basic authentication) "+
				"with every management request, readable by anyone on the network path. Use the broker's https:// Jolokia endpoint, "+
				"with tls.ca_cert_file if its certificate is signed by a private CA.", name, u.Hostname()),
			warning: true,
		})
	}
	var hosts []string
	seen := map[string]bool{}
	for _, raw := range cfg.AMQPURLs {
		u, err := url.Parse(raw)
		if err != nil || !strings.EqualFold(u.Scheme, "amqp") || isLoopbackHost(u.Hostname()) {
			continue
		}
		if (cfg.Username == "" && u.User == nil) || seen[u.Hostname()] {
			continue // no credentials: SASL ANONYMOUS sends no password
		}
		seen[u.Hostname()] = true
		hosts = append(hosts, u.Hostname())
	}
	if len(hosts) > 0 {
		sort.Strings(hosts)
		out = append(out, problem{
			path:    brokerAttrPath(name, "amqp_urls"),
			summary: "AMQP password sent in clear",
			detail: fmt.Sprintf("broker %q's amqp_urls reach %s over amqp:// (no TLS), so the login (SASL PLAIN) sends the password in clear, "+
				"and every message moved crosses the network unencrypted. Use the broker's amqps:// acceptor, with tls.ca_cert_file if "+
				"its certificate is signed by a private CA.", name, strings.Join(hosts, ", ")),
			warning: true,
		})
	}
	return out
}

func urlHasPassword(u *url.URL) bool {
	if u.User == nil {
		return false
	}
	p, ok := u.User.Password()
	return ok && p != ""
}

// verifiedSSLModes are the libpq sslmodes that verify the server's certificate; pgx, like
// libpq, defaults to prefer, which takes TLS when offered but verifies nothing.
var verifiedSSLModes = map[string]bool{"verify-full": true, "verify-ca": true}

// ledgerExposure finds whether the ledger's DSN sends its credentials to a PostgreSQL server
// other than this machine in clear or over unverified TLS (any sslmode but verify-full and
// verify-ca, PGSSLMODE when the DSN sets none). A Unix socket, a loopback host, and no host at
// all (pgx then tries the local socket and localhost) stay on this machine.
func ledgerExposure(dsn string, getenv environment) []problem {
	hosts, sslmode := dsnHostsAndSSLMode(dsn)
	if len(hosts) == 0 {
		if h := getenv("PGHOST"); h != "" {
			hosts = strings.Split(h, ",")
		}
	}
	if sslmode == "" {
		sslmode = getenv("PGSSLMODE")
	}
	if verifiedSSLModes[sslmode] {
		return nil
	}
	var remote []string
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" || strings.HasPrefix(h, "/") || isLoopbackHost(h) {
			continue
		}
		remote = append(remote, h)
	}
	if len(remote) == 0 {
		return nil
	}
	how := "over TLS that does not verify the server (sslmode=" + sslmode + "): a man in the middle can pose as the server"
	switch sslmode {
	case "":
		how = "with pgx's default sslmode=prefer, which takes TLS when the server offers it but does not verify the server, and goes in clear when it does not"
	case "disable", "allow":
		how = "in clear (sslmode=" + sslmode + ")"
	}
	return []problem{{
		path:    path.Root("ledger_dsn"),
		summary: "Ledger credentials not protected on the network",
		detail: fmt.Sprintf("ledger_dsn (or %s) reaches PostgreSQL on %s %s, and with it the ledger's password and every run's record. "+
			"Add sslmode=verify-full to the DSN (with sslrootcert=<CA file> if the server's certificate is signed by a private CA).",
			envLedgerDSN, strings.Join(remote, ", "), how),
		warning: true,
	}}
}

// dsnHostsAndSSLMode reads the hosts (without ports) and the sslmode of a libpq connection
// string: a postgres:// URL or key=value pairs.
func dsnHostsAndSSLMode(dsn string) (hosts []string, sslmode string) {
	dsn = strings.TrimSpace(dsn)
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, ""
		}
		q := u.Query()
		for _, hp := range strings.Split(u.Host, ",") {
			if hp == "" {
				continue
			}
			if h, _, err := net.SplitHostPort(hp); err == nil {
				hp = h
			}
			hosts = append(hosts, hp)
		}
		if h := q.Get("host"); h != "" {
			hosts = strings.Split(h, ",")
		}
		return hosts, q.Get("sslmode")
	}
	kv := dsnKeyValues(dsn)
	if h := kv["host"]; h != "" {
		hosts = strings.Split(h, ",")
	} else if a := kv["hostaddr"]; a != "" {
		hosts = strings.Split(a, ",")
	}
	return hosts, kv["sslmode"]
}

// dsnKeyValues splits a key=value connection string; values may be single-quoted, with \' and
// \\ escaped inside.
func dsnKeyValues(s string) map[string]string {
	out := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if s == "" {
			return out
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return out
		}
		key := strings.TrimSpace(s[:eq])
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val strings.Builder
		if strings.HasPrefix(s, "'") {
			s = s[1:]
			for len(s) > 0 && s[0] != '\'' {
				if s[0] == '\\' && len(s) > 1 {
					s = s[1:]
				}
				val.WriteByte(s[0])
				s = s[1:]
			}
			s = strings.TrimPrefix(s, "'")
		} else {
			end := strings.IndexAny(s, " \t\n\r")
			if end < 0 {
				end = len(s)
			}
			val.WriteString(s[:end])
			s = s[end:]
		}
		out[key] = val.String()
	}
}
