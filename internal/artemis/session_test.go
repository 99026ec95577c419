package artemis_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// A client logs in to the console once and sends its requests in that session, on both versions;
// a wrong password still fails as a refused login, with no session.
func TestClient_LogsInOnceAndKeepsTheConsoleSession(t *testing.T) {
	env := testenv.Require(t)
	onBrokers(t, []string{"source", "legacy"}, time.Minute, func(t *testing.T, ctx context.Context, broker string) {
		b := env.Broker(t, broker)
		c, err := artemis.New(artemis.Config{Name: broker, ManagementURL: b.ManagementURL, Username: env.AdminUser, Password: env.AdminPassword})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			if _, err := c.Heap(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := c.ManagementLogins(); n != 1 {
			t.Errorf("%d logins for 10 requests, want 1", n)
		}
		if !artemis.HasSessionCookie(c) {
			t.Error("the client holds no session cookie from the console's login")
		}

		wrong, err := artemis.New(artemis.Config{Name: broker, ManagementURL: b.ManagementURL, Username: env.AdminUser, Password: "not-the-password"})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if _, err := wrong.Heap(ctx); err == nil {
				t.Fatal("a wrong password was let in")
			}
		}
		if n := wrong.ManagementLogins(); n != 1 {
			t.Errorf("%d logins tried with a wrong password over 3 requests, want 1", n)
		}
	})
}

// Artemis 2.40's console blocks a user's logins for a while after failed ones (HTTP 429 with
// Retry-After, for Basic authentication too). A request answered so is sent again once the
// block ends, and then gets the broker's own answer: here the refusal of a wrong password,
// not the block.
func TestClient_WaitsOutAConsoleLoginBlock(t *testing.T) {
	env := testenv.Require(t)
	b := env.Broker(t, "source")
	if !strings.HasPrefix(b.Version, "2.4") {
		t.Skipf("broker source runs Artemis %s; the login block came with 2.40's console", b.Version)
	}
	ctx := testContext(t, time.Minute)
	user := testenv.UniqueName("blocked-user") // a user of its own: the block is per user name
	login := strings.TrimSuffix(b.ManagementURL, "/jolokia") + "/auth/login"
	u, _ := url.Parse(b.ManagementURL)
	origin := u.Scheme + "://" + u.Host
	blocked := false
	for range 20 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, login, strings.NewReader(`{"username":"`+user+`","password":"wrong"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			blocked = true
			break
		}
	}
	if !blocked {
		t.Fatalf("20 failed logins of user %s did not make the console block its logins", user)
	}
	c, err := artemis.New(artemis.Config{Name: "source", AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
		Username: user, Password: "wrong", RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.BrokerInfo(ctx)
	if !errors.Is(err, artemis.ErrUnauthorized) || !strings.Contains(err.Error(), "refused the login of user") {
		t.Fatalf("want the refusal of the wrong password once the block ended, got %v", err)
	}
	if n := c.ManagementRequests(); n < 2 {
		t.Errorf("the client sent %d management requests: the one answered 429 was not sent again", n)
	}
}
