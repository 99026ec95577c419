package artemis

import (
	"errors"
	"net/url"
	"strings"
)

// redactedPassword stands in for a password removed from a URL, as net/url's Redacted writes it.
const redactedPassword = "***"

// redactURL returns raw with the password of any user information replaced by "***", keeping
// the user name: "http://user:***@host:8161/console/jolokia". Every URL the operator configured
// goes through it before it appears in an error, a diagnostic or a log, since a management_url
// or amqp_urls entry may carry credentials.
//
// It works on the text, not on a parsed URL, so that a URL that does not parse (the very ones
// an error reports) is redacted too. A string without user information is returned unchanged.
func redactURL(raw string) string {
	// The authority starts after the scheme's "://" (or at the start, for "user:pw@host:port"
	// given without a scheme) and ends at the first '/', '?' or '#'.
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + len("://")
	}
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/?#"); i >= 0 {
		end = start + i
	}
	// The host never holds '@', so user information ends at the authority's last one (a
	// password may itself hold an unescaped '@').
	at := strings.LastIndex(raw[start:end], "@")
	if at < 0 {
		// A password holding an unescaped '/', '?' or '#' ends the apparent authority early:
		// then the user information runs to the next '@'. This may hide a port and path that
		// were not a password (as in "http://host:8161/a@b"), which is the safe mistake.
		at = strings.Index(raw[start:], "@")
		if at < 0 || !strings.Contains(raw[start:end], ":") {
			return raw
		}
	}
	at += start
	colon := strings.Index(raw[start:at], ":")
	if colon < 0 {
		return raw // a user name only
	}
	colon += start
	return raw[:colon+1] + redactedPassword + raw[at:]
}

// urlParseReason returns the reason url.Parse gave, without the URL it quotes: url.Parse wraps
// every failure in a *url.Error that repeats the whole input, password included.
func urlParseReason(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}

// redactSecret returns err with every occurrence of secret in its text replaced by "***". It
// still matches, with errors.Is, what err matched; it does not unwrap, so that no caller can
// reach the text with the secret.
func redactSecret(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{err: err, text: strings.ReplaceAll(err.Error(), secret, redactedPassword)}
}

type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }

// Is matches what the error with the secret matched.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }
