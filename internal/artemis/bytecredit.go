package artemis

import (
	"sync"

	"github.com/Azure/go-amqp"
)

// MessageSize reckons the bytes a received message holds: its body, and a rough allowance for
// headers and properties. It is what ReceiverOptions.MaxBytes counts.
func MessageSize(msg *amqp.Message) int64 {
	var n int64
	for _, d := range msg.Data {
		n += int64(len(d))
	}
	switch v := msg.Value.(type) {
	case string:
		n += int64(len(v))
	case []byte:
		n += int64(len(v))
	}
	return n + 256
}

// byteCredit grants a receiver's link credit by hand so that the bytes it holds stay bounded
// (ReceiverOptions.MaxBytes). A count-only window cannot do that: it is fixed when the link
// opens, before the first message shows how large messages are, and a window of 1,500 that
// suits 1 KiB messages prefetches 15 GiB of 10 MiB ones.
//
// It counts the messages received and not yet settled (by their MessageSize) and the credit
// granted and not yet used, each unused credit reckoned at the largest message seen so far.
// Before any message is seen, one message is invited at a time. When nothing is held and no
// credit is out, one message is always invited, so a message larger than the limit still
// passes, alone.
type byteCredit struct {
	mu          sync.Mutex
	link        *amqp.Receiver
	maxCount    int64 // the credit window: messages held plus credit out
	maxBytes    int64
	outstanding int64 // credit granted, not yet used by a message handed to the caller
	held        map[*amqp.Message]int64
	heldBytes   int64
	largest     int64
}

func newByteCredit(link *amqp.Receiver, maxCount int, maxBytes int64) *byteCredit {
	bc := &byteCredit{link: link, maxCount: int64(maxCount), maxBytes: maxBytes, held: map[*amqp.Message]int64{}}
	bc.mu.Lock()
	bc.topUpLocked()
	bc.mu.Unlock()
	return bc
}

// received records a message handed to the caller.
func (bc *byteCredit) received(msg *amqp.Message) {
	size := MessageSize(msg)
	bc.mu.Lock()
	defer bc.mu.Unlock()
	bc.outstanding--
	bc.held[msg] = size
	bc.heldBytes += size
	bc.largest = max(bc.largest, size)
	bc.topUpLocked()
}

// settled records that msg was accepted, released or modified.
func (bc *byteCredit) settled(msg *amqp.Message) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	size, ok := bc.held[msg]
	if !ok {
		return
	}
	delete(bc.held, msg)
	bc.heldBytes -= size
	bc.topUpLocked()
}

// topUpLocked grants what the limits allow. Credit goes out in steps of a quarter of the
// window (or when the link would otherwise run dry), not one flow frame per message.
func (bc *byteCredit) topUpLocked() {
	window := bc.maxCount
	if bc.largest > 0 {
		window = min(window, max(bc.maxBytes/bc.largest, 1))
	} else {
		window = 1 // no size known yet: invite one message and look at it
	}
	n := window - int64(len(bc.held)) - bc.outstanding
	if bc.largest > 0 {
		n = min(n, (bc.maxBytes-bc.heldBytes)/bc.largest-bc.outstanding)
	}
	if bc.outstanding == 0 && len(bc.held) == 0 {
		n = max(n, 1)
	}
	if n <= 0 || (n < max(window/4, 1) && bc.outstanding > 0) {
		return
	}
	// An error means the link is gone; the next Receive reports it.
	if err := bc.link.IssueCredit(uint32(n)); err == nil {
		bc.outstanding += n
	}
}
