package core

// MemoryHeadroom is what a relaying process needs besides the messages it holds: its code,
// its connections' buffers, the runtime, and the garbage not yet collected.
const MemoryHeadroom = 16 << 20

// MemoryLimit is the Go soft memory limit (runtime/debug.SetMemoryLimit) for a process that
// relays with maxInFlightBytes (zero: the default): the in-flight bytes plus MemoryHeadroom.
// Without a limit Go lets its heap grow to twice what is live before it collects, and a move
// of 20 x 10 MiB messages with the default 32 MiB in flight peaked at 85-91 MiB of RSS; under
// this limit at 54-57 MiB. The limit is soft: a process that holds more (several runs at once,
// a larger in-flight limit) still gets the memory, and collects more often.
func MemoryLimit(maxInFlightBytes int64) int64 {
	if maxInFlightBytes <= 0 {
		maxInFlightBytes = DefaultMaxInFlightBytes
	}
	return maxInFlightBytes + MemoryHeadroom
}

// HeldCopies is how many times over the relay holds a message it has received and not yet
// settled, for the in-flight byte limit: the frames it arrives in, its decoded body, and its
// encoding for the send (measured: 20 x 10 MiB peaked at 390 MiB when counted once).
const HeldCopies = 4
