package artemis_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

func TestRedactURL_HidesThePasswordAndKeepsTheRest(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://user:pass@host:8161/console/jolokia", "http://user:***@host:8161/console/jolokia"},
		{"amqps://transfer:s3cret@broker1.dc1:5671", "amqps://transfer:***@broker1.dc1:5671"},
		{"amqp://user:p@ss@host:5672", "amqp://user:***@host:5672"},                  // '@' inside the password
		{"http://user:pa/ss@host:8161/console", "http://user:***@host:8161/console"}, // '/' inside the password
		{"http://user:pa?ss@host:8161/console", "http://user:***@host:8161/console"}, // '?' inside the password
		{"http://user:p:w@host/x", "http://user:***@host/x"},                         // ':' inside the password
		{"http://user:@host/x", "http://user:***@host/x"},                            // empty password
		{"user:pass@host:8161", "user:***@host:8161"},                                // no scheme
		{"http://user:pass@host:bad port/x", "http://user:***@host:bad port/x"},      // does not parse
		{"http://user:pass@[::1]:8161/console/jolokia", "http://user:***@[::1]:8161/console/jolokia"},
		{"http://user@host:8161/console/jolokia", "http://user@host:8161/console/jolokia"}, // a user name only
		{"http://host:8161/console/jolokia", "http://host:8161/console/jolokia"},
		{"http://host:8161/console/jolokia?x=a@b", "http://host:***@b"}, // the safe mistake: an '@' later on may end a password
		{"amqp://127.0.0.1:5672", "amqp://127.0.0.1:5672"},
		{"", ""},
		{"not a url", "not a url"},
	} {
		if got := artemis.RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestConfigValidate_QuotesURLsWithoutTheirPassword(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  artemis.Config
	}{
		{"management URL that does not parse", artemis.Config{Name: "dc1", ManagementURL: "http://admin:hunter2-secret@host:bad/console/jolokia"}},
		{"management URL with another scheme", artemis.Config{Name: "dc1", ManagementURL: "ftp://admin:hunter2-secret@host/console/jolokia"}},
		{"AMQP URL that does not parse", artemis.Config{Name: "dc1", ManagementURL: "http://host:8161/console/jolokia",
			AMQPURLs: []string{"amqp://admin:hunter2-secret@host:bad"}}},
		{"AMQP URL with another scheme", artemis.Config{Name: "dc1", ManagementURL: "http://host:8161/console/jolokia",
			AMQPURLs: []string{"tcp://admin:hunter2-secret@host:61616"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			if strings.Contains(err.Error(), "hunter2-secret") || !strings.Contains(err.Error(), "admin:***@host") {
				t.Errorf("error %q shows the password or not the redacted URL", err)
			}
			if _, err := artemis.New(tt.cfg); err == nil || strings.Contains(err.Error(), "hunter2-secret") {
				t.Errorf("New: %v", err)
			}
		})
	}
}

// A management endpoint that refuses the login, or cannot be reached, is named in the error
// without the password its URL carries.
func TestManagement_PasswordInTheURLIsNeverEchoed(t *testing.T) {
	env := testenv.Require(t)
	target := env.Broker(t, "target")
	const wrong = "wrong-pw-7f3a91"
	withCreds := strings.Replace(target.ManagementURL, "://", "://"+env.TransferUser+":"+wrong+"@", 1)

	// A port nobody listens on: a listener closed again.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()

	for _, tt := range []struct {
		name    string
		url     string
		want    error
		wantMsg string
	}{
		{"wrong password", withCreds, artemis.ErrUnauthorized, `refused the login of user "transfer"`},
		{"unreachable", "http://" + env.TransferUser + ":" + wrong + "@127.0.0.1:" + strconv.Itoa(closedPort) + "/console/jolokia",
			artemis.ErrUnreachable, "unreachable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := artemis.New(artemis.Config{Name: "target", ManagementURL: tt.url, ConnectTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = c.Queue(ctx, testenv.UniqueName("test.redact"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("want %v, got %v", tt.want, err)
			}
			msg := err.Error()
			if strings.Contains(msg, wrong) {
				t.Errorf("the error shows the password: %s", msg)
			}
			if !strings.Contains(msg, env.TransferUser+":***@127.0.0.1") || !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("the error does not name the redacted URL and the cause (%q): %s", tt.wantMsg, msg)
			}
		})
	}
}

// An AMQP URL that carries a wrong password is refused, and neither the error nor the
// connection's URL shows the password.
func TestConnect_PasswordInTheAMQPURLIsNeverEchoed(t *testing.T) {
	env := testenv.Require(t)
	target := env.Broker(t, "target")
	const wrong = "wrong-pw-c41d07"
	withCreds := strings.Replace(target.AMQPURL, "://", "://"+env.TransferUser+":"+wrong+"@", 1)
	c, err := artemis.New(artemis.Config{Name: "target", AMQPURLs: []string{withCreds}, ManagementURL: target.ManagementURL,
		ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := c.Connect(ctx)
	if err == nil {
		_ = conn.Close()
		t.Fatal("the broker accepted a wrong password")
	}
	if !errors.Is(err, artemis.ErrUnauthorized) {
		t.Errorf("want ErrUnauthorized, got %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, wrong) || !strings.Contains(msg, `user "`+env.TransferUser+`"`) ||
		!strings.Contains(msg, env.TransferUser+":***@127.0.0.1") {
		t.Errorf("the error shows the password, or not the user and the redacted URL: %s", msg)
	}

	// The right password in the URL logs in, and the connection names its URL without it.
	right := strings.Replace(target.AMQPURL, "://", "://"+env.TransferUser+":"+env.TransferPassword+"@", 1)
	c, err = artemis.New(artemis.Config{Name: "target", AMQPURLs: []string{right}, ManagementURL: target.ManagementURL,
		ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	conn, err = c.Connect(ctx)
	if err != nil {
		t.Fatalf("the password in the URL was not used: %v", err)
	}
	defer conn.Close()
	if u := conn.URL(); strings.Contains(u, env.TransferPassword) || !strings.Contains(u, env.TransferUser+":***@") {
		t.Errorf("URL() = %q, want the user with the password redacted", u)
	}
}
