package artemis

import (
	"bytes"
	"encoding/binary"
	"net"
	"sync"
)

// Artemis sends its node id as the container-id of its AMQP Open, and a backup that takes over
// (shared store or replication) runs with its primary's node id. go-amqp does not expose the
// peer's container-id, so peerOpenConn reads it from the bytes go-amqp reads.

// maxPeerOpenBytes bounds what peerOpenConn holds while it looks for the peer's Open: the
// protocol headers, SASL frames and Open of a broker are a few hundred bytes. Past it the
// container-id is taken as unknown.
const maxPeerOpenBytes = 64 << 10

// peerOpenConn passes every byte read through unchanged and, on the way, parses the peer's
// AMQP Open performative for its container-id. It stops looking once the Open (or anything that
// rules it out) has been read. It never reads on its own, so it cannot block a reader.
type peerOpenConn struct {
	net.Conn

	mu          sync.Mutex
	seen        []byte // the bytes read so far, while still looking
	done        bool
	containerID string
}

func newPeerOpenConn(c net.Conn) *peerOpenConn { return &peerOpenConn{Conn: c} }

func (c *peerOpenConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if !c.done {
			c.seen = append(c.seen, p[:n]...)
			id, status := parsePeerOpen(c.seen)
			if status != openNeedMore || len(c.seen) > maxPeerOpenBytes {
				c.done, c.containerID, c.seen = true, id, nil
			}
		}
		c.mu.Unlock()
	}
	return n, err
}

// peerContainerID is the container-id of the peer's Open; "" when it has not been read or could
// not be parsed.
func (c *peerOpenConn) peerContainerID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.containerID
}

// openParse says how far parsePeerOpen got.
type openParse int

const (
	openNeedMore openParse = iota // the bytes end before the Open's container-id
	openFound                     // the container-id was read
	openAbsent                    // the first AMQP frame is no Open, or the bytes are not AMQP
)

const (
	amqpOpenCode   = 0x10
	amqpOpenSymbol = "amqp:open:list"
	frameTypeAMQP  = 0
)

// parsePeerOpen reads the bytes a peer sent from the start of the connection: protocol headers
// ("AMQP" and four bytes, before SASL and before AMQP), SASL frames (skipped), empty frames, then
// the first AMQP frame, which must be the Open. It returns the Open's container-id.
func parsePeerOpen(b []byte) (string, openParse) {
	pos := 0
	for {
		rest := b[pos:]
		if len(rest) < 8 {
			return "", openNeedMore
		}
		if bytes.HasPrefix(rest, []byte("AMQP")) {
			pos += 8
			continue
		}
		size := binary.BigEndian.Uint32(rest)
		doff := int(rest[4]) * 4
		if size < 8 || doff < 8 || uint64(doff) > uint64(size) || size > maxPeerOpenBytes {
			return "", openAbsent
		}
		if len(rest) < int(size) {
			return "", openNeedMore
		}
		frame := rest[:size]
		if rest[5] != frameTypeAMQP || int(size) == doff {
			pos += int(size) // a SASL frame, or an empty (heartbeat) frame
			continue
		}
		return openContainerID(frame[doff:])
	}
}

// openContainerID reads the container-id from the body of a complete AMQP frame.
func openContainerID(body []byte) (string, openParse) {
	d := amqpDecoder{b: body}
	if d.byte() != 0x00 { // a described type
		return "", openAbsent
	}
	switch code := d.byte(); code {
	case 0x53: // smallulong
		if d.byte() != amqpOpenCode {
			return "", openAbsent
		}
	case 0x80: // ulong
		if d.uint(8) != amqpOpenCode {
			return "", openAbsent
		}
	case 0xa3, 0xb3: // sym8, sym32
		n := d.uint(map[byte]int{0xa3: 1, 0xb3: 4}[code])
		if string(d.take(n)) != amqpOpenSymbol {
			return "", openAbsent
		}
	default:
		return "", openAbsent
	}
	var count uint64
	switch d.byte() {
	case 0x45: // list0: no fields, not even the mandatory container-id
		return "", openAbsent
	case 0xc0: // list8: size, count
		d.uint(1)
		count = d.uint(1)
	case 0xd0: // list32
		d.uint(4)
		count = d.uint(4)
	default:
		return "", openAbsent
	}
	if count == 0 {
		return "", openAbsent
	}
	var id []byte
	switch d.byte() {
	case 0xa1: // str8-utf8
		id = d.take(d.uint(1))
	case 0xb1: // str32-utf8
		id = d.take(d.uint(4))
	default: // null or another type: no container-id to compare
		return "", openAbsent
	}
	if d.short {
		return "", openAbsent // the frame is complete, so a field running past it is malformed
	}
	return string(id), openFound
}

// amqpDecoder reads big-endian fields from a byte slice; reading past the end sets short and
// yields zeros.
type amqpDecoder struct {
	b     []byte
	short bool
}

func (d *amqpDecoder) take(n uint64) []byte {
	if d.short || n > uint64(len(d.b)) {
		d.short = true
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *amqpDecoder) byte() byte {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *amqpDecoder) uint(width int) uint64 {
	v := d.take(uint64(width))
	var out uint64
	for _, x := range v {
		out = out<<8 | uint64(x)
	}
	return out
}
