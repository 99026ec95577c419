package testenv

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a loopback TCP proxy in front of one broker or database port, for fault tests: it
// can swallow what the client sends (as a network that stops delivering would), cut every
// connection at a precise point of a run, take its port down and bring it back, and send new
// connections to another server, which a broker kill cannot do.
type Proxy struct {
	addr string // the loopback "host:port" clients dial; it stays the same across Down and Up

	mu         sync.Mutex
	upstream   string                // where new connections go (Redirect changes it)
	ln         net.Listener          // nil while the proxy is down
	conns      map[net.Conn]struct{} // both ends of every live connection
	swallowing bool                  // client-to-broker bytes are dropped until the next Cut
	stallUntil time.Time             // no byte is forwarded either way before this (Stall)
	trigger    *stallTrigger         // a stall armed to begin at a client's request (StallAfter)
	accepted   int                   // connections accepted since the start or ResetAccepted
	wg         sync.WaitGroup
}

// NewProxy listens on a free loopback port and forwards each connection to upstream
// ("host:port"). It is closed when the test ends.
func NewProxy(t testing.TB, upstream string) *Proxy {
	t.Helper()
	p, err := StartProxy(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// StartProxy is NewProxy for a program rather than a test (the fault harness): the caller
// closes the proxy.
func StartProxy(upstream string) (*Proxy, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting a proxy to %s: %w", upstream, err)
	}
	p := &Proxy{addr: ln.Addr().String(), upstream: upstream, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept(ln)
	return p, nil
}

// Stall holds every byte in both directions for d, without closing anything: the connections
// stay open and silent, as a congested or briefly partitioned network leaves them, and then
// carry on where they stopped.
func (p *Proxy) Stall(d time.Duration) {
	p.mu.Lock()
	p.stallUntil = time.Now().Add(d)
	p.mu.Unlock()
}

// Addr is the proxy's "host:port".
func (p *Proxy) Addr() string { return p.addr }

// Swallow makes the proxy drop every byte clients send from now on, without closing anything:
// the broker stops hearing from the client (acknowledgements included) while the client's
// writes still succeed. Cut ends it.
func (p *Proxy) Swallow() {
	p.mu.Lock()
	p.swallowing = true
	p.mu.Unlock()
}

// Cut closes every connection through the proxy; new connections work normally again.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.swallowing = false
}

// Redirect cuts every connection and sends new ones to upstream ("host:port"): a name whose
// address moves to another server mid-run.
func (p *Proxy) Redirect(upstream string) {
	p.mu.Lock()
	p.upstream = upstream
	p.mu.Unlock()
	p.Cut()
}

// Down stops listening and cuts every connection: the proxy's port refuses connections, as a
// stopped server's does, until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	p.mu.Unlock()
	p.Cut()
}

// Up listens again on the proxy's port after Down: the server is back on the same address.
func (p *Proxy) Up() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", p.addr)
	if err != nil {
		return fmt.Errorf("listening again on the proxy's %s: %w", p.addr, err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

// Accepted is the number of connections clients opened through the proxy since its start or
// the last ResetAccepted: a test holds a client's connections to a budget with it.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// ResetAccepted counts connections from zero again.
func (p *Proxy) ResetAccepted() {
	p.mu.Lock()
	p.accepted = 0
	p.mu.Unlock()
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.Down()
	p.wg.Wait()
}

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		client, err := ln.Accept()
		if err != nil {
			return // closed by Down or Close
		}
		p.mu.Lock()
		upstream := p.upstream
		p.accepted++
		p.mu.Unlock()
		broker, err := (&net.Dialer{}).DialContext(context.Background(), "tcp", upstream)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns[client], p.conns[broker] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(broker, client, true)
		go p.pipe(client, broker, false)
	}
}

// pipe copies src to dst until either side closes; fromClient bytes are dropped while the proxy
// swallows.
func (p *Proxy) pipe(dst, src net.Conn, fromClient bool) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
		_ = dst.Close()
		_ = src.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if fromClient {
				p.watch(src, buf[:n])
			}
			p.mu.Lock()
			drop := fromClient && p.swallowing
			wait := time.Until(p.stallUntil)
			p.mu.Unlock()
			if wait > 0 {
				time.Sleep(wait) // Stall: hold this chunk, and so everything behind it
			}
			if !drop {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return // closed by either side or by Cut
		}
	}
}
