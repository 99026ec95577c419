package artemis

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// jolokiaRequest is one Jolokia request (exec, read or search).
type jolokiaRequest struct {
	Type      string         `json:"type"`
	MBean     string         `json:"mbean"`
	Operation string         `json:"operation,omitempty"`
	Attribute any            `json:"attribute,omitempty"`
	Arguments []any          `json:"arguments,omitempty"`
	Config    map[string]any `json:"config,omitempty"`
}

// jolokiaResponse is one Jolokia response. Errors come back in Status even when HTTP says 200.
type jolokiaResponse struct {
	Status    int             `json:"status"`
	Value     json.RawMessage `json:"value"`
	Error     string          `json:"error"`
	ErrorType string          `json:"error_type"`
}

// busyRetries bounds the retries of a management call refused as busy. The broker itself already
// waited up to a minute for its lock before refusing, so a few retries with backoff suffice.
const busyRetries = 4

// busyFirstWait is the first wait before such a retry; the waits double, 15 s in all.
const busyFirstWait = time.Second

func newHTTPClient(cfg Config) *http.Client {
	dialer := &net.Dialer{Timeout: cfg.connectTimeout(), KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy:               nil, // management traffic goes straight to the broker
		DialContext:         dialer.DialContext,
		TLSClientConfig:     cfg.TLS,
		TLSHandshakeTimeout: cfg.connectTimeout(),
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{Transport: transport, Jar: newSessionJar()}
}

// managementURL is the management URL as errors show it: without its password.
func (c *Client) managementURL() string { return redactURL(c.cfg.ManagementURL) }

// origin is the Origin header sent with every Jolokia request.
func (c *Client) origin() string {
	if c.cfg.ManagementOrigin != "" {
		return c.cfg.ManagementOrigin
	}
	u, err := url.Parse(c.cfg.ManagementURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// jolokia sends requests in one bulk POST and returns one response per request. Transport,
// authentication and CORS failures are errors; per-request failures are left in Status.
func (c *Client) jolokia(ctx context.Context, reqs ...jolokiaRequest) ([]jolokiaResponse, error) {
	return c.jolokiaFenced(ctx, nil, reqs...)
}

// jolokiaFenced is jolokia with a fence checked before a request is sent again (nil: none).
func (c *Client) jolokiaFenced(ctx context.Context, fence func(context.Context) error, reqs ...jolokiaRequest) ([]jolokiaResponse, error) {
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, fmt.Errorf("encoding management request: %w", err)
	}
	var status int
	var raw []byte
	for blocked := 0; ; blocked++ {
		var retryAfter time.Duration
		status, raw, retryAfter, err = c.post(ctx, body)
		if err != nil {
			return nil, err
		}
		if status != http.StatusTooManyRequests {
			break
		}
		// The console blocks a user's logins for a while after failed ones (Artemis 2.40's
		// console), Basic authentication included, before the request runs: it is sent again
		// once the block ends, up to loginBlockWaits times.
		if blocked == loginBlockWaits || !sleepCtx(ctx, min(retryAfter, loginBlockMaxWait)) {
			return nil, fmt.Errorf("broker %q: the console at %s blocks the logins of user %q after failed logins (HTTP 429, retry after %s): "+
				"wait, and stop whatever logs in as that user with a wrong password: %w",
				c.cfg.Name, c.managementURL(), c.cfg.Username, retryAfter, ErrUnauthorized)
		}
		if fence != nil {
			if err := fence(ctx); err != nil {
				return nil, err
			}
		}
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, c.loginError(status, raw)
	case http.StatusNotFound:
		return nil, fmt.Errorf("broker %q: no Jolokia endpoint at %s (HTTP 404): check management_url, usually http://host:8161/console/jolokia: %w",
			c.cfg.Name, c.managementURL(), ErrNotFound)
	}
	var out []jolokiaResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		// A single error object instead of an array: the whole request was refused.
		var single jolokiaResponse
		if json.Unmarshal(raw, &single) == nil && single.Status != 0 {
			if single.Status == http.StatusForbidden {
				return nil, c.loginError(single.Status, []byte(single.Error))
			}
			return nil, fmt.Errorf("broker %q: management request refused (status %d): %s", c.cfg.Name, single.Status, single.Error)
		}
		if status >= http.StatusInternalServerError {
			// A broker still starting (or stopping) answers from its web server without Jolokia.
			return nil, fmt.Errorf("broker %q: management at %s is not available (HTTP %d): %w",
				c.cfg.Name, c.managementURL(), status, ErrUnreachable)
		}
		return nil, fmt.Errorf("broker %q: unexpected management response from %s (HTTP %d): %.200s",
			c.cfg.Name, c.managementURL(), status, raw)
	}
	if len(out) != len(reqs) {
		return nil, fmt.Errorf("broker %q: %d management responses for %d requests", c.cfg.Name, len(out), len(reqs))
	}
	return out, nil
}

// loginBlockWaits bounds how often a request the console answered 429 (logins blocked) is sent
// again, and loginBlockMaxWait each wait: the console's first blocks last a second or two and
// grow with every failed login, so a longer one is reported rather than waited out.
const (
	loginBlockWaits   = 5
	loginBlockMaxWait = 5 * time.Second
)

// post sends one Jolokia request body, within the client's request timeout, and returns the
// HTTP status, the body and, for a 429, how long the console asks to wait.
func (c *Client) post(ctx context.Context, body []byte) (int, []byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	c.ensureSession(ctx)
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.ManagementURL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, fmt.Errorf("broker %q: management_url %q: %w", c.cfg.Name, c.managementURL(), urlParseReason(err))
	}
	httpReq.Header.Set("Content-Type", "application/json")
	if o := c.origin(); o != "" {
		httpReq.Header.Set("Origin", o)
	}
	if c.cfg.Username != "" {
		httpReq.SetBasicAuth(c.cfg.Username, c.cfg.Password)
	}
	c.requests.Add(1)
	resp, err := c.http.Do(httpReq)
	if err != nil {
		// The broker may come back as another process, with another configuration.
		c.info.forget()
		return 0, nil, 0, c.transportError(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, nil, 0, fmt.Errorf("broker %q: reading management response from %s: %w", c.cfg.Name, c.managementURL(), err)
	}
	return resp.StatusCode, raw, retryAfter(resp.Header), nil
}

// sleepCtx waits d, or less when ctx ends first (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// retryAfter reads a Retry-After header in seconds (the console's form); one second when it is
// missing or in another form.
func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

// transportError explains a request that got no HTTP answer. Timeouts and refused connections
// match ErrUnreachable (often temporary: a restarting broker), certificates ErrUntrustedCertificate.
func (c *Client) transportError(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.Timeout() {
		return fmt.Errorf("broker %q: management endpoint %s did not answer in time: %w: %w", c.cfg.Name, c.managementURL(), ErrUnreachable, err)
	}
	if untrustedCertificate(err) || certificateAlert(err) {
		return fmt.Errorf("broker %q: the TLS certificate of %s is not trusted: set tls.ca_cert_pem or tls.ca_cert_file to the CA that signed it: %w: %w",
			c.cfg.Name, c.managementURL(), ErrUntrustedCertificate, err)
	}
	return fmt.Errorf("broker %q: management endpoint %s is unreachable: %w: %w", c.cfg.Name, c.managementURL(), ErrUnreachable, err)
}

// loginError explains a refused login. The broker's console (Hawtio) answers 403 with no body
// alike for a wrong password, an unknown user and a user without a console role, so the error
// names every cause; only the CORS refusal carries a body of its own.
func (c *Client) loginError(status int, body []byte) error {
	if originRefused(string(body)) {
		return fmt.Errorf("broker %q: Jolokia at %s refused the Origin header %q: set management_origin to an origin allowed by the broker's etc/jolokia-access.xml (<allow-origin>): %w",
			c.cfg.Name, c.managementURL(), c.origin(), errOriginRejected)
	}
	user := c.cfg.Username
	if u, err := url.Parse(c.cfg.ManagementURL); err == nil && u.User != nil && user == "" {
		user = u.User.Username() // net/http logs in with the URL's credentials when no username is set
	}
	if user == "" {
		return fmt.Errorf("broker %q: management at %s needs a login (HTTP %d): set username and password: %w",
			c.cfg.Name, c.managementURL(), status, ErrUnauthorized)
	}
	return fmt.Errorf("broker %q: management at %s refused the login of user %q (HTTP %d): check the password, and that the user has a role listed in HAWTIO_ROLES (etc/artemis.profile): %w",
		c.cfg.Name, c.managementURL(), user, status, ErrUnauthorized)
}

// responseError turns a failed Jolokia response into an error that says what was attempted.
func (c *Client) responseError(what string, r jolokiaResponse) error {
	switch refusal := managementRefusal(r); {
	case errors.Is(refusal, ErrNotFound):
		return fmt.Errorf("broker %q: %s: %w", c.cfg.Name, what, ErrNotFound)
	case errors.Is(refusal, ErrForbidden):
		return fmt.Errorf("broker %q: user %q lacks the right for %s (grant the operation to the user's role in etc/management.xml): %w",
			c.cfg.Name, c.cfg.Username, what, ErrForbidden)
	case errors.Is(refusal, errBusy):
		return fmt.Errorf("broker %q: %s: %s: %w", c.cfg.Name, what, r.Error, errBusy)
	}
	if err := classifyManagement(cleanJavaError(r.Error)); err != nil {
		return fmt.Errorf("broker %q: %s: %w", c.cfg.Name, what, err)
	}
	return fmt.Errorf("broker %q: %s: %s", c.cfg.Name, what, cleanJavaError(r.Error))
}

// exec calls one MBean operation and returns its raw value. Operations refused because the
// broker's management lock is busy are retried with backoff.
func (c *Client) exec(ctx context.Context, mbean, operation string, args ...any) (json.RawMessage, error) {
	return c.execFenced(ctx, nil, mbean, operation, args...)
}

// execFenced is exec with a fence checked before each attempt (nil: none): a call retried
// after a busy refusal is sent only while the fence still holds.
func (c *Client) execFenced(ctx context.Context, fence func(context.Context) error, mbean, operation string, args ...any) (json.RawMessage, error) {
	if args == nil {
		args = []any{}
	}
	req := jolokiaRequest{Type: "exec", MBean: mbean, Operation: operation, Arguments: args}
	what := "calling " + operation
	backoff := cmp.Or(c.busyBackoff, busyFirstWait)
	for attempt := 0; ; attempt++ {
		if fence != nil {
			if err := fence(ctx); err != nil {
				return nil, err
			}
		}
		resps, err := c.jolokiaFenced(ctx, fence, req)
		if err != nil {
			return nil, err
		}
		r := resps[0]
		if r.Status == http.StatusOK {
			return r.Value, nil
		}
		err = c.responseError(what, r)
		if !errors.Is(err, errBusy) || attempt >= busyRetries {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("broker %q: %s: waiting for the busy management lock: %w", c.cfg.Name, what, ctx.Err())
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// read reads attributes of one MBean. Attributes the broker does not have (older versions) are
// left out of the result rather than failing the read.
func (c *Client) read(ctx context.Context, mbean string, attrs ...string) (map[string]json.RawMessage, error) {
	req := jolokiaRequest{Type: "read", MBean: mbean, Attribute: attrs, Config: map[string]any{"ignoreErrors": true}}
	resps, err := c.jolokia(ctx, req)
	if err != nil {
		return nil, err
	}
	r := resps[0]
	if r.Status != http.StatusOK {
		return nil, c.responseError("reading "+strings.Join(attrs, ", "), r)
	}
	// Attributes are asked for as a list, so the value is an object even for one attribute.
	values := map[string]json.RawMessage{}
	if err := json.Unmarshal(r.Value, &values); err != nil {
		return nil, fmt.Errorf("broker %q: decoding attributes: %w", c.cfg.Name, err)
	}
	if err := c.dropMissingAttributes(values); err != nil {
		return nil, err
	}
	return values, nil
}

// dropMissingAttributes removes from values the attributes the broker does not have; one the
// user's role may not read is an error. With ignoreErrors either comes back as an error string
// in the attribute's place.
func (c *Client) dropMissingAttributes(values map[string]json.RawMessage) error {
	for k, v := range values {
		var s string
		if json.Unmarshal(v, &s) != nil {
			continue
		}
		switch refusal := attributeRefusal(s); {
		case errors.Is(refusal, ErrForbidden):
			return fmt.Errorf("broker %q: user %q lacks the right to read attribute %s (grant get* and is* to the user's role in etc/management.xml): %w",
				c.cfg.Name, c.cfg.Username, k, ErrForbidden)
		case errors.Is(refusal, ErrNotFound):
			delete(values, k)
		}
	}
	return nil
}

// search returns the MBean names matching a pattern.
func (c *Client) search(ctx context.Context, pattern string) ([]string, error) {
	resps, err := c.jolokia(ctx, jolokiaRequest{Type: "search", MBean: pattern})
	if err != nil {
		return nil, err
	}
	r := resps[0]
	if r.Status != http.StatusOK {
		return nil, c.responseError("searching MBeans", r)
	}
	var names []string
	if err := json.Unmarshal(r.Value, &names); err != nil {
		return nil, fmt.Errorf("broker %q: decoding MBean search: %w", c.cfg.Name, err)
	}
	return names, nil
}

// quoteObjectNameValue quotes a value for a JMX ObjectName the way javax.management.ObjectName.quote does.
func quoteObjectNameValue(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range v {
		switch r {
		case '"', '*', '?', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// unquoteObjectNameValue reverses quoteObjectNameValue; unquoted values are returned as they are.
func unquoteObjectNameValue(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	var b strings.Builder
	inner := v[1 : len(v)-1]
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' && i+1 < len(inner) {
			i++
			if inner[i] == 'n' {
				b.WriteByte('\n')
				continue
			}
		}
		b.WriteByte(inner[i])
	}
	return b.String()
}

// objectNameKeys splits "domain:k1=v1,k2=\"v,2\"" into its key properties, honouring quotes.
func objectNameKeys(name string) map[string]string {
	keys := map[string]string{}
	i := strings.IndexByte(name, ':')
	if i < 0 {
		return keys
	}
	rest := name[i+1:]
	for len(rest) > 0 {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			break
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			j := 1
			for j < len(rest) && rest[j] != '"' {
				if rest[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(rest) {
				j = len(rest) - 1
			}
			val, rest = rest[:j+1], rest[j+1:]
		} else if k := strings.IndexByte(rest, ','); k >= 0 {
			val, rest = rest[:k], rest[k:]
		} else {
			val, rest = rest, ""
		}
		keys[key] = unquoteObjectNameValue(val)
		rest = strings.TrimPrefix(rest, ",")
	}
	return keys
}
