package artemis

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestObjectNameKeys_HonoursQuotesAndEscapes(t *testing.T) {
	name := `org.apache.activemq.artemis:address="a,b",broker="x\"y",component=addresses,queue="q\*",routing-type="anycast",subcomponent=queues`
	got := objectNameKeys(name)
	want := map[string]string{"address": "a,b", "broker": `x"y`, "component": "addresses", "queue": "q*",
		"routing-type": "anycast", "subcomponent": "queues"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if q := quoteObjectNameValue(`x"y*`); unquoteObjectNameValue(q) != `x"y*` || q != `"x\"y\*"` {
		t.Errorf("quote round trip: %s", q)
	}
}

func TestVersionAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v        string
		maj, min int
		want     bool
	}{
		{"2.40.0", 2, 32, true}, {"2.31.2", 2, 32, false}, {"2.32.0", 2, 32, true}, {"3.0.0", 2, 50, true},
		{"2.9.0", 2, 18, false}, {"2.18.0-SNAPSHOT", 2, 18, true}, {"", 2, 0, false},
	} {
		if got := VersionAtLeast(tc.v, tc.maj, tc.min); got != tc.want {
			t.Errorf("VersionAtLeast(%q, %d, %d) = %v", tc.v, tc.maj, tc.min, got)
		}
	}
}

// The broker refuses a management call with AMQ229245 when its management lock stayed busy for a
// minute; the client retries such calls with backoff, and gives up with errBusy after a bound.
func TestExec_RetriesBusyManagementLock(t *testing.T) {
	var calls atomic.Int32
	busyFor := int32(2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if r.Header.Get("Origin") != "http://"+r.Host {
			t.Errorf("Origin header %q", r.Header.Get("Origin"))
		}
		if calls.Add(1) <= busyFor {
			_, _ = io.WriteString(w, `[{"status":500,"error_type":"org.apache.activemq.artemis.api.core.ActiveMQTimeoutException","error":"org.apache.activemq.artemis.api.core.ActiveMQTimeoutException : AMQ229245: Management controller is busy with another task. Please try again"}]`)
			return
		}
		_, _ = io.WriteString(w, `[{"status":200,"value":42}]`)
	}))
	defer srv.Close()
	c, err := New(Config{Name: "b", ManagementURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c.busyBackoff = time.Millisecond // the waits' length is not what this test is about
	raw, err := c.exec(context.Background(), "m", "countMessages()")
	if err != nil || string(raw) != "42" || calls.Load() != 3 {
		t.Fatalf("got %s, %v after %d calls", raw, err, calls.Load())
	}

	// A context that ends during a wait ends the call, saying what it waited for.
	calls.Store(0)
	busyFor = 100
	c.busyBackoff = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // ends during the hour-long wait, not before the first answer
	defer cancel()
	_, err = c.exec(ctx, "m", "countMessages()")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("want a busy error once the context ends, got %v", err)
	}
}

func TestExec_GivesUpWithErrBusyAfterBoundedRetries(t *testing.T) {
	calls := new(atomic.Int32)
	c := alwaysBusyClient(t, calls)
	_, err := c.exec(context.Background(), "m", "op")
	if !errors.Is(err, errBusy) || calls.Load() != busyRetries+1 {
		t.Fatalf("want errBusy after %d calls, got %v after %d", busyRetries+1, err, calls.Load())
	}
}

// A call retried after a busy refusal checks its fence again before each retry: once the fence
// fails (a lease lost during the waits), the call is not sent again and the fence's error ends it.
func TestExec_ChecksTheFenceBeforeEachRetryOfABusyCall(t *testing.T) {
	calls := new(atomic.Int32)
	c := alwaysBusyClient(t, calls)
	lost := errors.New("lease lost")
	var checks int
	fence := func(context.Context) error {
		checks++
		if checks > 2 {
			return lost
		}
		return nil
	}
	_, err := c.execFenced(context.Background(), fence, "m", "moveMessages()")
	if !errors.Is(err, lost) || calls.Load() != 2 || checks != 3 {
		t.Fatalf("want the fence's error after 2 calls and 3 checks, got %v after %d calls and %d checks", err, calls.Load(), checks)
	}

	// A fence that fails at once sends nothing.
	calls.Store(0)
	_, err = c.execFenced(context.Background(), func(context.Context) error { return lost }, "m", "moveMessages()")
	if !errors.Is(err, lost) || calls.Load() != 0 {
		t.Fatalf("want the fence's error and no call, got %v after %d calls", err, calls.Load())
	}
}

// alwaysBusyClient is a client of a management endpoint that refuses every call as busy, counting
// the calls in calls, with waits too short to matter between its retries.
func alwaysBusyClient(t *testing.T, calls *atomic.Int32) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.WriteString(w, `[{"status":500,"error":"x : AMQ229245: Management controller is busy"}]`)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{Name: "b", ManagementURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c.busyBackoff = time.Millisecond // the waits' length is not what these tests are about
	return c
}

func TestParseAddressSettings_BothShapes(t *testing.T) {
	legacy := `{"DLA":"DLQ","expiryAddress":"ExpiryQueue","maxDeliveryAttempts":10,"maxSizeBytes":-1,"addressFullMessagePolicy":"PAGE","redistributionDelay":-1,"autoDeleteQueues":false,"defaultRingSize":-1,"lastValueQueue":false}`
	modern := `{"addressFullMessagePolicy":"DROP","maxSizeBytes":1048576,"deadLetterAddress":"DLQ","idCacheSize":5}`
	s, err := parseAddressSettings(legacy)
	if err != nil || s.DeadLetterAddress != "DLQ" || s.MaxDeliveryAttempts != 10 || s.AutoDeleteQueues || s.IDCacheSize != nil {
		t.Errorf("legacy: %+v %v", s, err)
	}
	s, err = parseAddressSettings(modern)
	if err != nil || s.AddressFullPolicy != "DROP" || s.MaxSizeBytes != 1048576 || s.DeadLetterAddress != "DLQ" ||
		s.IDCacheSize == nil || *s.IDCacheSize != 5 || s.MaxDeliveryAttempts != 10 || !s.AutoDeleteQueues {
		t.Errorf("modern (absent keys take code defaults): %+v %v", s, err)
	}
}

func TestLegacyAddressSettingsArgs_OverlaysRequestOnCurrent(t *testing.T) {
	current := map[string]any{}
	for _, f := range legacyFields {
		current[f.key] = "cur-" + f.key
	}
	args, err := legacyAddressSettingsArgs("m", current, map[string]any{"deadLetterAddress": "", "maxDeliveryAttempts": -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 58 || args[0] != "m" || args[1] != "" || args[5] != -1 || args[2] != "cur-expiryAddress" {
		t.Errorf("args: %v", args[:7])
	}
	if _, err := legacyAddressSettingsArgs("m", current, map[string]any{"pageLimitBytes": 1}); err == nil {
		t.Error("a setting the old form cannot express must be refused")
	}
}
