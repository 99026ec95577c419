package artemis

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// loopbackPair is a connected TCP pair on 127.0.0.1: the coalescing side and the peer.
func loopbackPair(t *testing.T) (*coalescingConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	cc := newCoalescingConn(dialed)
	t.Cleanup(func() { _ = cc.Close(); _ = peer.Close() })
	return cc, peer
}

func TestCoalescingConn_DeliversEveryWriteInOrderAndCloseSendsWhatIsQueued(t *testing.T) {
	cc, peer := loopbackPair(t)
	var want bytes.Buffer
	for i := 0; i < 20000; i++ {
		frame := []byte{byte(i), byte(i >> 8), 0xAB, byte(i % 7)}
		want.Write(frame)
		n, err := cc.Write(frame)
		if err != nil || n != len(frame) {
			t.Fatalf("write %d: n=%d err=%v", i, n, err)
		}
	}
	// Close right after the last write: what is still queued must reach the peer first.
	if err := cc.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	_ = peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(peer)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("peer read %d bytes, want %d in the order written", len(got), want.Len())
	}
	if _, err := cc.Write([]byte{1}); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v, want net.ErrClosed", err)
	}
}

func TestCoalescingConn_AFullQueueWaitsForTheDeadline(t *testing.T) {
	cc, _ := loopbackPair(t) // the peer never reads: the socket buffers fill, then the queue
	if err := cc.SetWriteDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	start := time.Now()
	var err error
	for i := 0; i < 4096 && err == nil; i++ { // 256 MiB at most: far beyond the socket buffers
		_, err = cc.Write(chunk)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("writes into a peer that does not read ended with %v, want a deadline error", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("the deadline error came after %s", waited)
	}
	cc.mu.Lock()
	queued := len(cc.pending)
	cc.mu.Unlock()
	if queued > coalescedWriteLimit+len(chunk) {
		t.Fatalf("%d bytes queued, want at most %d", queued, coalescedWriteLimit+len(chunk))
	}
}

func TestCoalescingConn_ReportsAFailedSocketWrite(t *testing.T) {
	cc, peer := loopbackPair(t)
	// The peer resets the connection (linger 0), so our socket writes fail.
	if tcp, ok := peer.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = peer.Close()
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for err == nil && time.Now().Before(deadline) {
		_, err = cc.Write(make([]byte, 1024))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes to a reset connection kept succeeding")
	}
}
