package artemis

import (
	"net"
	"os"
	"sync"
	"time"
)

// coalescedWriteLimit bounds the bytes a coalescingConn holds that the socket has not taken
// yet; a writer past it waits. It is a few frames of the broker's default maximum frame size,
// so a large message streams through instead of piling up in memory.
const coalescedWriteLimit = 512 << 10

// coalescingConn gathers the frames go-amqp writes one by one (a transfer, a disposition, a
// flow) into as few socket writes as the socket can take: while one write is in the kernel,
// the next frames wait in a buffer and leave together. An idle connection adds no delay (the
// first frame is written at once). A relay writes a frame per message in each direction, so
// this saves a system call per frame on our side and a wake-up per frame on the broker's.
//
// A Write returns once the bytes are queued, not sent. That is safe for what we write: a send
// counts only when the broker's disposition arrives, and an acknowledgement lost with the
// connection leaves the message in staging, where the duplicate id makes its second delivery
// harmless. A failed socket write is returned by the next Write and by Close.
type coalescingConn struct {
	net.Conn

	mu       sync.Mutex
	changed  *sync.Cond // signalled when pending, writing or err change
	pending  []byte     // queued, not yet handed to the socket
	spare    []byte     // the other buffer, reused to avoid allocating per write
	writing  bool       // the flusher is in a socket write
	closed   bool
	err      error
	deadline time.Time // the write deadline go-amqp set last
}

func newCoalescingConn(c net.Conn) *coalescingConn {
	cc := &coalescingConn{Conn: c}
	cc.changed = sync.NewCond(&cc.mu)
	go cc.flusher()
	return cc
}

// Write queues p. It waits only while more than coalescedWriteLimit bytes are queued, and
// gives up at the write deadline then, as a socket write would.
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && !c.closed && len(c.pending) >= coalescedWriteLimit {
		if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
			return 0, &net.OpError{Op: "write", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.ErrDeadlineExceeded}
		}
		c.waitLocked()
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.closed {
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, p...)
	c.changed.Broadcast()
	return len(p), nil
}

// waitLocked waits for a change, waking at the write deadline if there is one.
func (c *coalescingConn) waitLocked() {
	if c.deadline.IsZero() {
		c.changed.Wait()
		return
	}
	t := time.AfterFunc(time.Until(c.deadline), func() {
		c.mu.Lock()
		c.changed.Broadcast()
		c.mu.Unlock()
	})
	c.changed.Wait()
	t.Stop()
}

// SetWriteDeadline applies to the socket write in progress and the queued bytes.
func (c *coalescingConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sets both deadlines, the write one as SetWriteDeadline does.
func (c *coalescingConn) SetDeadline(t time.Time) error {
	if err := c.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// flusher hands the queued bytes to the socket, all of them at once, until the connection is
// closed or a write fails.
func (c *coalescingConn) flusher() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for len(c.pending) == 0 && !c.closed && c.err == nil {
			c.changed.Wait()
		}
		if c.err != nil || len(c.pending) == 0 {
			return // closed with nothing left, or broken
		}
		out := c.pending
		c.pending = c.spare[:0]
		c.writing = true
		c.mu.Unlock()
		_, err := c.Conn.Write(out)
		c.mu.Lock()
		c.writing = false
		c.spare = out[:0]
		if err != nil && c.err == nil {
			c.err = err
		}
		c.changed.Broadcast()
	}
}

// Close writes what is queued (within the write deadline, or one second when there is none,
// so that a last frame such as AMQP close reaches the broker) and closes the socket.
func (c *coalescingConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.changed.Broadcast()
	if c.deadline.IsZero() || time.Until(c.deadline) > time.Second {
		c.deadline = time.Now().Add(time.Second)
		_ = c.Conn.SetWriteDeadline(c.deadline)
	}
	for c.err == nil && (len(c.pending) > 0 || c.writing) && time.Now().Before(c.deadline) {
		c.waitLocked()
	}
	c.mu.Unlock()
	return c.Conn.Close()
}
