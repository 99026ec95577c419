package artemis_test

import (
	"context"
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
