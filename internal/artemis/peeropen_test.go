package artemis

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"
)

// Hand-built AMQP frames, as a broker sends them.
var (
	saslHeader = []byte("AMQP\x03\x01\x00\x00")
	amqpHeader = []byte("AMQP\x00\x01\x00\x00")
)

// frame builds a frame of type typ with an optional extended header of ext words.
func frame(typ byte, ext int, body []byte) []byte {
	doff := 2 + ext
	out := make([]byte, doff*4, doff*4+len(body))
	binary.BigEndian.PutUint32(out, uint32(doff*4+len(body)))
	out[4], out[5] = byte(doff), typ
	return append(out, body...)
}

func str8(s string) []byte { return append([]byte{0xa1, byte(len(s))}, s...) }
func str32(s string) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0xb1}, uint32(len(s))), s...)
}

// list8 and list32 encode a list of already encoded fields.
func list8(fields ...[]byte) []byte {
	body := bytes.Join(fields, nil)
	return append([]byte{0xc0, byte(len(body) + 1), byte(len(fields))}, body...)
}

func list32(fields ...[]byte) []byte {
	body := bytes.Join(fields, nil)
	out := binary.BigEndian.AppendUint32([]byte{0xd0}, uint32(len(body)+4))
	out = binary.BigEndian.AppendUint32(out, uint32(len(fields)))
	return append(out, body...)
}

var (
	openSmallULong = []byte{0x00, 0x53, 0x10}
	openULong      = []byte{0x00, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x10}
	openSymbol     = append([]byte{0x00, 0xa3, byte(len("amqp:open:list"))}, "amqp:open:list"...)
	beginSmall     = []byte{0x00, 0x53, 0x11}
	// SASL frames as Artemis sends them: mechanisms, then outcome ok.
	saslMechanisms = frame(1, 0, append([]byte{0x00, 0x53, 0x40}, list8(append([]byte{0xe0, 0x0b, 0x01, 0xa3, 0x05}, "PLAIN"...))...))
	saslOutcome    = frame(1, 0, append([]byte{0x00, 0x53, 0x44}, list8([]byte{0x50, 0x00})...))
)

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestParsePeerOpen(t *testing.T) {
	const id = "3c6ed9e2-aa8b-11ef-8d2c-0242ac120002"
	open := frame(0, 0, cat(openSmallULong, list8(str8(id), str8("localhost"), []byte{0x70, 0, 0, 0x80, 0})))
	tests := []struct {
		name   string
		in     []byte
		want   string
		status openParse
	}{
		{"SASL then open (smallulong, list8, str8)", cat(saslHeader, saslMechanisms, saslOutcome, amqpHeader, open), id, openFound},
		{"no SASL", cat(amqpHeader, open), id, openFound},
		{"ulong descriptor, list32, str32", cat(amqpHeader, frame(0, 0, cat(openULong, list32(str32(id))))), id, openFound},
		{"symbolic descriptor", cat(amqpHeader, frame(0, 0, cat(openSymbol, list8(str8(id))))), id, openFound},
		{"extended header", cat(amqpHeader, frame(0, 1, cat(openSmallULong, list8(str8(id))))), id, openFound},
		{"empty frame before the open", cat(amqpHeader, frame(0, 0, nil), open), id, openFound},
		{"nothing yet", nil, "", openNeedMore},
		{"half a header", saslHeader[:5], "", openNeedMore},
		{"SASL frame cut", cat(saslHeader, saslMechanisms[:10]), "", openNeedMore},
		{"open cut in its container-id", cat(amqpHeader, open[:20]), "", openNeedMore},
		{"first AMQP frame is not an open", cat(amqpHeader, frame(0, 0, cat(beginSmall, list8(str8(id))))), "", openAbsent},
		{"open with list0", cat(amqpHeader, frame(0, 0, cat(openSmallULong, []byte{0x45}))), "", openAbsent},
		{"open with null container-id", cat(amqpHeader, frame(0, 0, cat(openSmallULong, list8([]byte{0x40})))), "", openAbsent},
		{"container-id longer than the frame", cat(amqpHeader, frame(0, 0, cat(openSmallULong, []byte{0xc0, 3, 1, 0xa1, 40}, []byte("short")))), "", openAbsent},
		{"not AMQP", []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), "", openAbsent},
		{"frame size below the header", cat(amqpHeader, []byte{0, 0, 0, 4, 2, 0, 0, 0}), "", openAbsent},
		{"data offset past the frame", cat(amqpHeader, []byte{0, 0, 0, 8, 9, 0, 0, 0}), "", openAbsent},
		{"frame larger than the inspection limit", cat(amqpHeader, []byte{0, 0x10, 0, 0, 2, 0, 0, 0}), "", openAbsent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, status := parsePeerOpen(tt.in)
			if got != tt.want || status != tt.status {
				t.Fatalf("parsePeerOpen = %q, %d; want %q, %d", got, status, tt.want, tt.status)
			}
		})
	}
}

// TestPeerOpenConn_PassesBytesThroughOneByteAtATime reads a broker's handshake and some frames
// after it one byte per Read: every byte arrives unchanged, and the container-id is found.
func TestPeerOpenConn_PassesBytesThroughOneByteAtATime(t *testing.T) {
	const id = "node-a"
	after := frame(0, 0, cat(beginSmall, list8([]byte{0x40})))
	stream := cat(saslHeader, saslMechanisms, saslOutcome, amqpHeader, frame(0, 0, cat(openSmallULong, list8(str8(id)))), after, after)
	c := peerOpenConnOver(t, stream)
	got, err := io.ReadAll(iotest.OneByteReader(c))
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if !bytes.Equal(got, stream) {
		t.Fatalf("the bytes changed on the way through")
	}
	if c.peerContainerID() != id {
		t.Fatalf("container-id %q, want %q", c.peerContainerID(), id)
	}
	if c.seen != nil || !c.done {
		t.Fatalf("still inspecting after the open (%d bytes held)", len(c.seen))
	}
}

// TestPeerOpenConn_StopsLookingAtTheLimit: a peer that sends no open within the limit leaves the
// container-id unknown and the bytes untouched.
func TestPeerOpenConn_StopsLookingAtTheLimit(t *testing.T) {
	stream := cat(saslHeader, bytes.Repeat(saslOutcome, maxPeerOpenBytes/len(saslOutcome)+2))
	c := peerOpenConnOver(t, stream)
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if !bytes.Equal(got, stream) || c.peerContainerID() != "" || !c.done || c.seen != nil {
		t.Fatalf("equal=%t id=%q done=%t held=%d", bytes.Equal(got, stream), c.peerContainerID(), c.done, len(c.seen))
	}
}

func TestWrongNodeError_MatchesAndNamesURLsAndNodes(t *testing.T) {
	err := error(&WrongNodeError{Broker: "eu", Want: "n1", Found: []nodeAt{{URL: "amqp://h2:5672", NodeID: "n2"}, {URL: "amqp://h3:5672"}}})
	if !errors.Is(err, ErrWrongNode) || !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrUnauthorized) {
		t.Fatalf("matches: wrong node %t, unreachable %t, unauthorized %t", errors.Is(err, ErrWrongNode), errors.Is(err, ErrUnreachable), errors.Is(err, ErrUnauthorized))
	}
	for _, want := range []string{`"eu"`, "amqp://h2:5672 reaches node n2", "amqp://h3:5672 reaches node (unknown", "not node n1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

func TestNodeIDOf(t *testing.T) {
	for in, want := range map[string]string{
		"a8404419-ed4b-11f1-900d-02fc00000001": "a8404419-ed4b-11f1-900d-02fc00000001",
		"A8404419-ED4B-11F1-900D-02FC00000001": "A8404419-ED4B-11F1-900D-02FC00000001",
		"legacy":                               "",
		"":                                     "",
		"a8404419-ed4b-11f1-900d-02fc0000000g": "",
		"a8404419ed4b-11f1-900d-02fc000000001": "",
	} {
		if got := nodeIDOf(in); got != want {
			t.Errorf("nodeIDOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// peerOpenConnOver is a peerOpenConn over one end of a pipe whose other end writes stream and
// closes.
func peerOpenConnOver(t *testing.T, stream []byte) *peerOpenConn {
	client, server := net.Pipe()
	t.Cleanup(func() { _ = client.Close() })
	go func() {
		_, _ = server.Write(stream)
		_ = server.Close()
	}()
	return newPeerOpenConn(client)
}
