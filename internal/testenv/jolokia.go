package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// AdminJolokia runs one Jolokia request on a broker of the environment as the admin user, for
// test setup that artemis.Client does not offer (diverts, queue options the engine never sets),
// and returns its value. A request the broker does not answer with status 200 fails the test.
func AdminJolokia(t testing.TB, env *Env, broker string, request map[string]any) json.RawMessage {
	t.Helper()
	b := env.Broker(t, broker)
	body, err := json.Marshal(request)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.ManagementURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(env.AdminUser, env.AdminPassword)
	u, err := url.Parse(b.ManagementURL)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("jolokia %v on %s: %v", request["operation"], broker, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status int             `json:"status"`
		Value  json.RawMessage `json:"value"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Status != http.StatusOK {
		t.Fatalf("jolokia %v on %s: HTTP %d, status %d %s (%v)", request["operation"], broker, resp.StatusCode, r.Status, r.Error, err)
	}
	return r.Value
}

// AdminExec runs operation op (its Java signature) with args on a broker's own MBean as the
// admin user, as AdminJolokia does.
func AdminExec(t testing.TB, env *Env, broker, op string, args ...any) json.RawMessage {
	t.Helper()
	return AdminJolokia(t, env, broker, map[string]any{"type": "exec", "mbean": BrokerObjectName(broker), "operation": op, "arguments": args})
}

// BrokerObjectName is the JMX object name of a broker's own MBean.
func BrokerObjectName(broker string) string {
	return fmt.Sprintf("org.apache.activemq.artemis:broker=%q", broker)
}
