package testenv

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestProxy_StallAfterBeginsWithTheNextChunkOfTheNthMatchsConnection: the chunks that match
// before the nth, and the nth itself, pass; the stall begins with what that connection sends
// next, and what the others send does not begin it.
func TestProxy_StallAfterBeginsWithTheNextChunkOfTheNthMatchsConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c) }() // echo
		}
	}()
	p := NewProxy(t, ln.Addr().String())
	begun, disarm := p.StallAfter(func(b []byte) bool { return bytes.Contains(b, []byte("attach")) }, 2, time.Millisecond)
	defer disarm()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// Sent, and echoed back, so that the proxy has seen it before the next step.
	roundTrip := func(c net.Conn, s string) {
		t.Helper()
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		got := make([]byte, len(s))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != s {
			t.Fatalf("echo of %q: %q, %v", s, got, err)
		}
	}
	fired := func() bool {
		select {
		case <-begun:
			return true
		default:
			return false
		}
	}
	first, second := dial(), dial()
	roundTrip(first, "attach one")
	roundTrip(first, "flow one") // after the first match only: nothing armed
	roundTrip(second, "attach two")
	if fired() {
		t.Fatal("the stall began at the nth match itself")
	}
	roundTrip(first, "more of the first") // another connection than the armed one
	if fired() {
		t.Fatal("the stall began with another connection's chunk")
	}
	roundTrip(second, "flow two")
	select {
	case <-begun:
	case <-time.After(30 * time.Second):
		t.Fatal("the stall did not begin with the armed connection's next chunk")
	}
}
