package testenv

import (
	"net"
	"time"
)

// stallTrigger is a stall armed by StallAfter: the nth client chunk that match accepts arms its
// connection, and that connection's next client chunk begins the stall.
type stallTrigger struct {
	match func([]byte) bool
	left  int
	armed net.Conn
	d     time.Duration
	begun chan struct{}
}

// StallAfter stalls every connection for d (as Stall does) from the moment a client sends
// anything more on the connection where it sent the nth chunk that match accepts: a request
// reaches the broker and is answered, and what the client sends next (the credit of a link it
// just attached, say) is held with everything else. The broker then has nothing to deliver on
// that link for d, as a loaded broker or a congested network would leave it. The returned
// channel is closed when the stall begins; disarm drops a trigger that has not fired. A chunk
// is what one read of the client's connection returns: a frame the client writes at once, as
// an AMQP client does, is seen whole.
func (p *Proxy) StallAfter(match func([]byte) bool, nth int, d time.Duration) (begun <-chan struct{}, disarm func()) {
	t := &stallTrigger{match: match, left: max(nth, 1), d: d, begun: make(chan struct{})}
	p.mu.Lock()
	p.trigger = t
	p.mu.Unlock()
	return t.begun, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.trigger == t {
			p.trigger = nil
		}
	}
}

// watch runs on each chunk a client sends, before it is forwarded: it arms or fires the
// trigger of StallAfter.
func (p *Proxy) watch(client net.Conn, chunk []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.trigger
	switch {
	case t == nil:
	case t.armed == client:
		p.stallUntil = time.Now().Add(t.d)
		p.trigger = nil
		close(t.begun)
	case t.armed == nil && t.match(chunk):
		if t.left--; t.left == 0 {
			t.armed = client
		}
	}
}
