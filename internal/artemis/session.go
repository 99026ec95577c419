package artemis

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"time"
)

// A management session: the console's login (POST <console>/auth/login) gives a session cookie,
// and a Jolokia request that carries it is not logged in again. With Basic authentication alone
// the broker runs a JAAS login for every request, and for a user whose password is stored hashed
// (ENC(...), what artemis create writes) that is a PBKDF2 derivation each time: measured on 2.40
// and 2.31, about 1.5-2 ms of broker CPU per request, against about 0.5 ms with the session. Every
// request still carries Basic authentication, so a session that ended (the console's idle
// timeout, a broker restart) or a console without the login endpoint only costs the login again.

// sessionRenewal is how long after its last request a session is logged in again: the console
// ends a session idle for 30 minutes.
const sessionRenewal = 20 * time.Minute

// managementSession is a client's console session.
type managementSession struct {
	mu       sync.Mutex
	lastUsed time.Time // zero: not logged in
	// triedAt is when a login last failed: it is not tried again for sessionRenewal, so a
	// console without the endpoint does not cost a login per request.
	triedAt time.Time
	// blockedUntil, when set, is when a login the console refused as blocked (HTTP 429) may be
	// tried again.
	blockedUntil time.Time
}

// newSessionJar is the cookie jar of a client's HTTP requests.
func newSessionJar() http.CookieJar {
	jar, _ := cookiejar.New(nil) // never fails without options
	return jar
}

// loginURL is the console's login endpoint beside management_url's Jolokia, or "" when
// management_url does not end in /jolokia (no console to log in to).
func (c *Client) loginURL() string {
	base, ok := strings.CutSuffix(strings.TrimRight(c.cfg.ManagementURL, "/"), "/jolokia")
	if !ok || c.cfg.Username == "" {
		return ""
	}
	return base + "/auth/login"
}

// ensureSession logs in to the console unless this client's session is recent. A failed login
// is not an error: the request goes with Basic authentication alone, whose errors say what is
// wrong.
func (c *Client) ensureSession(ctx context.Context) {
	url := c.loginURL()
	if url == "" {
		return
	}
	s := &c.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.lastUsed.IsZero() && time.Since(s.lastUsed) < sessionRenewal {
		s.lastUsed = time.Now()
		return
	}
	if s.lastUsed.IsZero() && !s.triedAt.IsZero() && time.Since(s.triedAt) < sessionRenewal &&
		(s.blockedUntil.IsZero() || time.Now().Before(s.blockedUntil)) {
		return
	}
	s.lastUsed, s.triedAt, s.blockedUntil = time.Time{}, time.Now(), time.Time{}
	body, _ := json.Marshal(map[string]string{"username": c.cfg.Username, "password": c.cfg.Password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if o := c.origin(); o != "" {
		req.Header.Set("Origin", o)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return
	}
	resp.Body.Close()
	c.logins.Add(1)
	switch resp.StatusCode {
	case http.StatusOK:
		s.lastUsed = time.Now()
	case http.StatusTooManyRequests:
		// Logins blocked for a while after failed ones: the session is tried again once the
		// block ends, not a renewal period later.
		s.blockedUntil = time.Now().Add(retryAfter(resp.Header))
	}
}
