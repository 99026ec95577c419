package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
)

// ManagementCounter is a loopback HTTP proxy in front of one broker's console that counts what
// a client asks of it: HTTP requests to Jolokia, the Jolokia operations they carry (a bulk
// request carries several), and console logins. Tests point a provider's management_url at it
// to hold the number of management calls a transfer makes to a budget.
type ManagementCounter struct {
	url string // the proxied management URL, same path as the broker's

	mu     sync.Mutex
	counts ManagementCounts
}

// ManagementCounts is what a ManagementCounter saw since its start or its last Reset.
type ManagementCounts struct {
	HTTPRequests int            // POSTs to Jolokia, each one HTTP round trip
	Operations   int            // Jolokia operations in them
	Logins       int            // POSTs to the console's auth/login
	ByOperation  map[string]int // "exec queueControl.countMessages", "read broker", "search" ...
}

// Summary lists the operations by count, most frequent first, for a test's failure message.
func (c ManagementCounts) Summary() string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range c.ByOperation {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].k < all[j].k
	})
	var b strings.Builder
	for _, e := range all {
		b.WriteString("  ")
		b.WriteString(e.k)
		b.WriteString(": ")
		b.WriteString(itoa(e.n))
		b.WriteString("\n")
	}
	return b.String()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// NewManagementCounter starts a counting proxy to the console of managementURL
// (http://host:port/console/jolokia) and returns it; it is closed when the test ends.
func NewManagementCounter(t testing.TB, managementURL string) *ManagementCounter {
	t.Helper()
	up, err := url.Parse(managementURL)
	if err != nil || up.Scheme != "http" {
		t.Fatalf("a management counter needs an http:// management URL, not %q", managementURL)
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &ManagementCounter{url: "http://" + ln.Addr().String() + up.Path}
	c.counts.ByOperation = map[string]int{}
	origin := up.Scheme + "://" + up.Host
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: up.Scheme, Host: up.Host})
		r.Out.Host = up.Host
		// The console checks a request's origin against its own address, not the proxy's.
		if r.In.Header.Get("Origin") != "" {
			r.Out.Header.Set("Origin", origin)
		}
	}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.observe(r)
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return c
}

// URL is the management URL to give a client instead of the broker's.
func (c *ManagementCounter) URL() string { return c.url }

// Counts returns what was counted since the start or the last Reset.
func (c *ManagementCounter) Counts() ManagementCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	out.ByOperation = map[string]int{}
	for k, v := range c.counts.ByOperation {
		out.ByOperation[k] = v
	}
	return out
}

// Reset starts counting again from zero.
func (c *ManagementCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = ManagementCounts{ByOperation: map[string]int{}}
}

// observe counts one request; it reads the body and puts it back for the proxy.
func (c *ManagementCounter) observe(r *http.Request) {
	if r.Method != http.MethodPost {
		return
	}
	if strings.HasSuffix(r.URL.Path, "/auth/login") {
		c.mu.Lock()
		c.counts.Logins++
		c.mu.Unlock()
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	type op struct {
		Type      string `json:"type"`
		MBean     string `json:"mbean"`
		Operation string `json:"operation"`
		Attribute any    `json:"attribute"`
	}
	var ops []op
	if json.Unmarshal(body, &ops) != nil {
		var one op
		if json.Unmarshal(body, &one) == nil {
			ops = []op{one}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts.HTTPRequests++
	c.counts.Operations += len(ops)
	for _, o := range ops {
		key := o.Type + " " + mbeanKind(o.MBean)
		if o.Operation != "" {
			key += "." + strings.SplitN(o.Operation, "(", 2)[0]
		}
		c.counts.ByOperation[key]++
	}
}

// mbeanKind names an MBean by its component ("broker", "queue", "address", "divert"...), so that
// the counts of one kind of call add up across queues.
func mbeanKind(mbean string) string {
	if mbean == "" {
		return ""
	}
	keys := map[string]string{}
	if _, props, ok := strings.Cut(mbean, ":"); ok {
		for _, kv := range strings.Split(props, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				keys[k] = v
			}
		}
	}
	switch {
	case keys["subcomponent"] != "":
		return strings.Trim(keys["subcomponent"], `"`)
	case keys["component"] != "":
		return strings.Trim(keys["component"], `"`)
	case keys["broker"] != "":
		return "broker"
	}
	return mbean
}
