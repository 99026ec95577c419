package core

import (
	"strconv"
	"sync"
	"time"
)

// checkReuseWindow bounds how long a passed check stands in for the check a run makes before it
// moves anything. Under terraform apply the two are milliseconds apart: the apply re-plans each
// resource (ModifyPlan runs the preflight) right before it creates or updates it.
const checkReuseWindow = 30 * time.Second

// PassedChecks remembers, for checkReuseWindow, the transfers whose refusal rules passed in
// full (with the canaries) in this process, so that a run started or resumed right after such
// a preflight does not read both brokers and send the canaries a second time: a resumed apply
// relays sooner, and the source broker is spared a staging canary. A check that refused, or
// that skipped the canaries (a plan that only reads, the default), is not remembered. The zero value is ready
// to use, and it is safe for concurrent use.
type PassedChecks struct {
	// now is time.Now unless a test sets it.
	now func() time.Time

	mu     sync.Mutex
	passed map[string]time.Time
}

func (c *PassedChecks) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// CheckKey names what a check decides on: the transfer and the in-flight window (the target's
// duplicate cache is judged against it).
func CheckKey(spec Spec, opts Options) string {
	return spec.Key() + "/" + strconv.Itoa(opts.WithDefaults().BatchSize)
}

// Note records whether the check of key passed now: a refusal (or a check that could not be
// made) forgets an earlier pass, so that a run after it checks again.
func (c *PassedChecks) Note(key string, passed bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !passed {
		delete(c.passed, key)
		return
	}
	if c.passed == nil {
		c.passed = map[string]time.Time{}
	}
	c.passed[key] = c.clock()
}

// take reports whether the check of key passed within checkReuseWindow. It is used up: a second
// run of the same transfer checks again.
func (c *PassedChecks) take(key string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.passed[key]
	delete(c.passed, key)
	return ok && c.clock().Sub(at) < checkReuseWindow
}
