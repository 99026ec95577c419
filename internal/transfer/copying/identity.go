package copying

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/go-amqp"
)

// identityFieldJMSXDeliveryCount is left out of the identity: see above.
const identityFieldJMSXDeliveryCount = "JMSXDeliveryCount"

// identityFieldActualExpiry is the property the broker adds to a message it expired onto an
// expiry queue (a Core message shows it as a property, an AMQP one as the annotation
// identityAnnotationActualExpiry): it is back on the queue with it when it is retried.
const (
	identityFieldActualExpiry      = "_AMQ_ACTUAL_EXPIRY"
	identityAnnotationActualExpiry = "x-opt-ACTUAL-EXPIRY"
)

// identityAnnotationOrigPrefix starts the annotations an AMQP message gains when the broker
// moves it (seen on 2.40: x-opt-ORIG-ADDRESS, x-opt-ORIG-QUEUE, x-opt-ORIG-MESSAGE-ID), the
// annotation form of the _AMQ_ORIG_* properties.
const identityAnnotationOrigPrefix = "x-opt-ORIG-"

// identityFieldOrigPrefix starts the properties the broker adds to a message it moves (an
// admin move, a dead-letter or expiry move, a retry back to the queue): _AMQ_ORIG_ADDRESS,
// _AMQ_ORIG_QUEUE, _AMQ_ORIG_MESSAGE_ID and _AMQ_ORIG_ROUTING_TYPE, as a Core message shows them.
const identityFieldOrigPrefix = "_AMQ_ORIG_"

// The versions of a copy's message identity. A run keeps the version it was created with
// (the ledger records it), so a run resumed by a newer provider finds what it copied.
const (
	// identityV1 hashes every property the producer could set, with the address (to) and
	// the absolute expiry: a message the broker moved off the queue and back (it sets to, may
	// reset the expiry and adds _AMQ_ORIG_*) got a new identity and was copied again.
	identityV1 = 1
	// identityV2 leaves out what the broker changes when it re-adds a message to the queue:
	// to, absolute-expiry-time and the _AMQ_ORIG_* properties, so a re-added message is known
	// for the one already copied.
	identityV2 = 2
	// identityV3 adds what V2 left out although a consumer tells messages apart by it: the
	// header's durability and priority, and the message annotations the producer set (every
	// one but those the broker adds when it moves or expires a message). Under V2 two messages
	// without a message-id that differed only there had one identity, and the second was not
	// copied. The header's ttl stays out: a converted Core message shows the time it has left,
	// and a move clears it (both seen on 2.40).
	identityV3 = 3
	// currentIdentity is the version new copy runs use.
	currentIdentity = identityV3
)

// messageIdentity is the identity of a browsed message (see above) in the current version.
func messageIdentity(msg *amqp.Message) int64 { return messageIdentityV(currentIdentity, msg) }

// messageIdentityV is the identity of a browsed message in version v (identityV1 for a run
// recorded before versions, whose ledger row says 1).
func messageIdentityV(v int, msg *amqp.Message) int64 {
	h := sha256.New()
	brokerSet := v >= identityV2 // leave out what the broker sets when it re-adds a message
	if p := msg.Properties; p != nil {
		identityField(h, "message-id", p.MessageID)
		identityField(h, "user-id", p.UserID)
		if !brokerSet {
			identityField(h, "to", p.To)
		}
		identityField(h, "subject", p.Subject)
		identityField(h, "reply-to", p.ReplyTo)
		identityField(h, "correlation-id", p.CorrelationID)
		identityField(h, "content-type", p.ContentType)
		identityField(h, "content-encoding", p.ContentEncoding)
		if !brokerSet {
			identityField(h, "absolute-expiry-time", p.AbsoluteExpiryTime)
		}
		identityField(h, "creation-time", p.CreationTime)
		identityField(h, "group-id", p.GroupID)
		identityField(h, "group-sequence", p.GroupSequence)
		identityField(h, "reply-to-group-id", p.ReplyToGroupID)
	}
	keys := make([]string, 0, len(msg.ApplicationProperties))
	for k := range msg.ApplicationProperties {
		if k != identityFieldJMSXDeliveryCount && (!brokerSet || !strings.HasPrefix(k, identityFieldOrigPrefix)) &&
			(v < identityV3 || k != identityFieldActualExpiry) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // Go maps are unordered; the identity may not be
	identityBytes(h, 'A', []byte(strconv.Itoa(len(keys))))
	for _, k := range keys {
		identityBytes(h, 'k', []byte(k))
		identityValue(h, msg.ApplicationProperties[k])
	}
	identityBytes(h, 'D', []byte(strconv.Itoa(len(msg.Data))))
	for _, d := range msg.Data {
		identityBytes(h, 'd', d)
	}
	identityField(h, "value", msg.Value)
	identityBytes(h, 'S', []byte(strconv.Itoa(len(msg.Sequence))))
	for _, s := range msg.Sequence {
		identityValue(h, s)
	}
	if v >= identityV3 {
		identityHeaderAndAnnotations(h, msg)
	}
	var sum [sha256.Size]byte
	return int64(binary.BigEndian.Uint64(h.Sum(sum[:0])[:8])) //nolint:gosec // the bits, as a bigint key
}

// identityHeaderAndAnnotations writes what identityV3 adds: the header's durability and
// priority (an absent header is what AMQP defaults it to: not durable, priority 4), and the
// message annotations but those the broker adds.
func identityHeaderAndAnnotations(h hash.Hash, msg *amqp.Message) {
	durable, priority := false, uint8(4)
	if msg.Header != nil {
		durable, priority = msg.Header.Durable, msg.Header.Priority
	}
	identityField(h, "durable", durable)
	identityField(h, "priority", priority)
	n := 0
	for k := range msg.Annotations {
		if producerAnnotation(k) {
			n++
		}
	}
	identityMap(h, n, func(yield func(k, v any)) {
		for k, v := range msg.Annotations {
			if producerAnnotation(k) {
				yield(k, v)
			}
		}
	})
}

// producerAnnotation reports whether a message annotation key is the producer's (or the
// broker's conversion of what the producer set, such as x-opt-jms-msg-type), not one the
// broker adds when it moves or expires the message.
func producerAnnotation(key any) bool {
	var k string
	switch x := key.(type) {
	case string:
		k = x
	case amqp.Symbol:
		k = string(x)
	}
	return !strings.HasPrefix(k, identityAnnotationOrigPrefix) && k != identityAnnotationActualExpiry
}

// identityField writes a named field: its name, then its typed value.
func identityField(h hash.Hash, name string, v any) {
	identityBytes(h, 'f', []byte(name))
	identityValue(h, v)
}

// identityBytes writes a tag, the length and the bytes, so that no two sequences of fields
// encode alike.
func identityBytes(h hash.Hash, tag byte, b []byte) {
	var n [9]byte
	n[0] = tag
	binary.BigEndian.PutUint64(n[1:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// identityValue writes an AMQP value with its type, so that the string "1" and the long 1 (or
// a message-id "x" and a binary one) give different identities.
func identityValue(h hash.Hash, v any) {
	num := func(tag byte, x uint64) {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], x)
		identityBytes(h, tag, b[:])
	}
	switch x := v.(type) {
	case nil:
		identityBytes(h, 'n', nil)
	case amqp.Null:
		identityBytes(h, 'n', nil)
	case bool:
		if x {
			identityBytes(h, 'b', []byte{1})
		} else {
			identityBytes(h, 'b', []byte{0})
		}
	case int8:
		num('1', uint64(x)) //nolint:gosec // the bits
	case int16:
		num('2', uint64(x)) //nolint:gosec // the bits
	case int32:
		num('4', uint64(x)) //nolint:gosec // the bits
	case int64:
		num('8', uint64(x)) //nolint:gosec // the bits
	case int:
		num('8', uint64(x)) //nolint:gosec // the bits
	case uint8:
		num('!', uint64(x))
	case uint16:
		num('@', uint64(x))
	case uint32:
		num('$', uint64(x))
	case uint64:
		num('*', x)
	case float32:
		num('F', uint64(math.Float32bits(x)))
	case float64:
		num('G', math.Float64bits(x))
	case string:
		identityBytes(h, 's', []byte(x))
	case *string:
		if x == nil {
			identityBytes(h, 'n', nil)
		} else {
			identityBytes(h, 's', []byte(*x))
		}
	case amqp.Symbol:
		identityBytes(h, 'y', []byte(x))
	case []byte:
		identityBytes(h, 'x', x)
	case amqp.UUID:
		identityBytes(h, 'u', x[:])
	case time.Time:
		num('t', uint64(x.UnixMilli())) //nolint:gosec // AMQP timestamps are milliseconds
	case *time.Time:
		if x == nil {
			identityBytes(h, 'n', nil)
		} else {
			num('t', uint64(x.UnixMilli())) //nolint:gosec // AMQP timestamps are milliseconds
		}
	case *uint32:
		if x == nil {
			identityBytes(h, 'n', nil)
		} else {
			num('$', uint64(*x))
		}
	case []any:
		identityBytes(h, 'L', []byte(strconv.Itoa(len(x))))
		for _, e := range x {
			identityValue(h, e)
		}
	case map[string]any:
		identityMap(h, len(x), func(yield func(k, v any)) {
			for k, v := range x {
				yield(k, v)
			}
		})
	case map[any]any:
		identityMap(h, len(x), func(yield func(k, v any)) {
			for k, v := range x {
				yield(k, v)
			}
		})
	default:
		// Types go-amqp rarely decodes to (arrays, described values): their printed form with
		// the type. fmt prints maps sorted by key, so this too is the same on every browse.
		identityBytes(h, '?', []byte(fmt.Sprintf("%T:%v", v, v)))
	}
}

// identityMap writes a map as its entries sorted by their encoding: a map's order on the wire
// is not part of the message.
func identityMap(h hash.Hash, n int, each func(yield func(k, v any))) {
	entries := make([][]byte, 0, n)
	each(func(k, v any) {
		e := sha256.New()
		identityValue(e, k)
		identityValue(e, v)
		entries = append(entries, e.Sum(nil))
	})
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i], entries[j]) < 0 })
	identityBytes(h, 'M', []byte(strconv.Itoa(len(entries))))
	for _, e := range entries {
		identityBytes(h, 'e', e)
	}
}

// copyDuplicateID is the _AMQ_DUPL_ID of a copied message: the run and the message's identity.
// It is the same every time the message is sent, so the target's duplicate detection drops a
// copy sent again after a crash before the ledger recorded it.
func copyDuplicateID(runID string, identity int64) string {
	return "studio:" + runID + ":c" + strconv.FormatInt(identity, 10)
}

// copyExpiry is the absolute expiry (Unix ms, 0 for none) a copy of a browsed message gets:
// its absolute-expiry-time when it has one (a Core message converted by the broker always
// does, the broker writes it), else creation-time plus ttl for an AMQP message that gives a
// ttl only. Without a creation-time the expiry the source broker computed (arrival plus ttl)
// cannot be read over AMQP: the copy keeps the ttl, and the target counts it from its own
// arrival, so such a copy expires later than the original by the time between the two.
func copyExpiry(msg *amqp.Message) int64 {
	if p := msg.Properties; p != nil && p.AbsoluteExpiryTime != nil && !p.AbsoluteExpiryTime.IsZero() && p.AbsoluteExpiryTime.UnixMilli() > 0 {
		return p.AbsoluteExpiryTime.UnixMilli()
	}
	if msg.Header == nil || msg.Header.TTL <= 0 {
		return 0
	}
	if p := msg.Properties; p != nil && p.CreationTime != nil && p.CreationTime.UnixMilli() > 0 {
		return p.CreationTime.Add(msg.Header.TTL).UnixMilli()
	}
	return 0
}

// hasProducerMessageID reports whether a browsed message carries a message-id.
func hasProducerMessageID(msg *amqp.Message) bool {
	return msg.Properties != nil && msg.Properties.MessageID != nil
}
