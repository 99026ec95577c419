package core

import (
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Options tune a run. The zero value of each field means its documented default.
type Options struct {
	// ChunkSize bounds how many messages one broker-side staging move takes, keeping each
	// management call far inside the broker's one-minute management lock. Default 2000.
	ChunkSize int
	// BatchSize is how many messages the relay sends before waiting for their confirmations
	// (and the most it holds unconfirmed). Default 500.
	BatchSize int
	// MaxInFlightBytes bounds the bytes of messages held in this process at once, by sizing
	// the staging prefetch and each batch. Default 32 MiB. A single message larger than this
	// is still relayed, alone.
	MaxInFlightBytes int64
	// RetryBudget is how long the relay keeps reconnecting to a broker that went away before
	// it gives up (staging intact). Default 5 minutes.
	RetryBudget time.Duration
	// IdleWait is how long the relay waits for a staged message before it checks whether the
	// run is finished. Default 1 second.
	IdleWait time.Duration
	// Progress, when set, is called after each staging chunk and relay batch, whenever the
	// run starts or stops waiting, and every second while a run works. It must not block;
	// deciding what to log, and how often, is the caller's.
	Progress func(Progress)
	// MaxMessagesPerSecond caps the rate at which the relay sends messages to the target:
	// in any t seconds it sends at most MaxMessagesPerSecond*t plus a burst of a tenth of a
	// second's worth. A batch then holds at most half a second's worth of messages, so the
	// pace, not the batch, sets the rhythm the target sees. Zero (or less): no cap, as fast
	// as the brokers allow. It is not part of a run's identity: a resumed run takes the value
	// of the process that resumes it.
	MaxMessagesPerSecond float64
	// CopyIdleTimeout is how long a copy's browse of the source waits for a next message
	// before it takes the selection as walked to its end: Artemis gives a browser no
	// end-of-queue signal. Generous by default, since a browse of a paged queue reads pages
	// from disk as it goes. A whole-queue copy of a queue nobody consumes from or produces
	// to ends sooner, once the browse has delivered every message the queue holds
	// (the copy's walkEnded); other walks end by waiting it out once (per selector).
	// Default 15 seconds.
	CopyIdleTimeout time.Duration
	// CreatedBy is recorded in a new run's manifest.
	CreatedBy string
	// HeapPausePercent is the target broker's heap use, as a percentage of its max, at and above
	// which the relay pauses sending while the target address pages: every message sent there
	// with a duplicate id keeps a page-transaction record on the target's heap until it is
	// consumed. The relay goes on once the heap is below it again or the address no longer
	// pages. Default 90; a negative value turns the pause off.
	HeapPausePercent int
	// HeapCheckInterval is how often, at most, the relay reads the target's heap and paging
	// state while it sends, and while it pauses. Default 5 seconds.
	HeapCheckInterval time.Duration
	// ExpiryWindow is how many messages with an expiry are staged, and relayed, at a time:
	// their expiries are recorded on the source broker before the move and held in memory by
	// the relay. Default 1000.
	ExpiryWindow int
}

// The defaults and bounds of Options, which the provider's attributes use too.
const (
	DefaultChunkSize = 2000
	// MaxChunkSize keeps one staging move far inside the broker's one-minute management lock.
	MaxChunkSize     = 100_000
	DefaultBatchSize = 500
	// MaxBatchSize is the relay's AMQP credit window: it never holds more unconfirmed messages,
	// so a larger batch would never fill.
	MaxBatchSize            = artemis.MaxCredit
	DefaultMaxInFlightBytes = 32 << 20
	// MinMaxInFlightBytes is the least in-flight limit that keeps a batch of small messages
	// moving.
	MinMaxInFlightBytes = 1 << 20
	defaultRetryBudget  = 5 * time.Minute
	defaultIdleWait     = time.Second
	defaultExpiryWindow = 1000
	// defaultHeapPausePercent leaves the target's JVM a tenth of its heap for what a pause
	// does not stop: other producers, consumers and its collector.
	defaultHeapPausePercent  = 90
	defaultHeapCheckInterval = 5 * time.Second
	// defaultCopyIdleTimeout is Options.CopyIdleTimeout's default.
	defaultCopyIdleTimeout = 15 * time.Second
)

func (o Options) WithDefaults() Options {
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxInFlightBytes <= 0 {
		o.MaxInFlightBytes = DefaultMaxInFlightBytes
	}
	if o.RetryBudget <= 0 {
		o.RetryBudget = defaultRetryBudget
	}
	if o.IdleWait <= 0 {
		o.IdleWait = defaultIdleWait
	}
	if o.ExpiryWindow <= 0 {
		o.ExpiryWindow = defaultExpiryWindow
	}
	if o.HeapPausePercent == 0 {
		o.HeapPausePercent = defaultHeapPausePercent
	}
	if o.HeapCheckInterval <= 0 {
		o.HeapCheckInterval = defaultHeapCheckInterval
	}
	if o.CopyIdleTimeout <= 0 {
		o.CopyIdleTimeout = defaultCopyIdleTimeout
	}
	if o.MaxMessagesPerSecond > 0 {
		o.BatchSize = min(o.BatchSize, pacedBatchSize(o.MaxMessagesPerSecond))
	} else {
		o.MaxMessagesPerSecond = 0
	}
	return o
}

// Progress is a snapshot of a run, for logs. Moved and Selected cover the whole run, every
// process that worked on it; the other counts this process.
type Progress struct {
	RunID string
	Phase Phase
	// Moved is what the target confirmed over the whole run, each message once.
	Moved int64
	// Selected is the size of the run's whole selection, as SelectedKind says it is known: an
	// estimate from the count made when this process started, exact once staging is complete,
	// or a lower bound when the broker could not count it. Never less than Moved.
	Selected     int64
	SelectedKind CountKind
	Staged       int64 // moved into staging by this process
	Relayed      int64 // confirmed by the target and removed from staging by this process, each once
	Returned     int64 // moved back to the source by this process
	Remaining    int64 // in staging now (estimated from this process's counts)
	// Rate is the messages per second this process relayed over the last 30 seconds (since
	// it started, when that is shorter); 0 during its first second.
	Rate float64
	// ETA is the time left to relay the rest of the selection at Rate; -1 when it cannot be
	// told (no rate yet, or only a lower bound of the selection).
	ETA time.Duration
	// Waiting is why the run waits, empty when it does not; WaitingFor how long it has.
	Waiting    string
	WaitingFor time.Duration
	// Waited is how long this process has waited in all; LastWaiting the reason of its latest
	// wait, also once that ended.
	Waited      time.Duration
	LastWaiting string
	// Note is a passing event (which broker and node the relay connected to), empty in most
	// reports.
	Note    string
	Elapsed time.Duration
}

// Result is what a finished (or stopped) run did in this process. Each field says the modes it
// applies to; the others stay zero.
type Result struct {
	// RunID, T0, Resumed (an earlier process worked on the run) and Duration (how long this
	// process worked on it): both modes.
	RunID    string
	T0       time.Time
	Resumed  bool
	Duration time.Duration
	// Relayed counts the messages this process put on the target, each once: both modes (a
	// move's relayed, a copy's copied).
	Relayed int64
	// RelayedTotal counts those of every process that worked on the run, as the run's records
	// say (a move's on the source broker, a copy's in the ledger): both modes.
	RelayedTotal int64
	// ExpiryKept counts the messages that reached the target with their source expiry: both
	// modes.
	ExpiryKept int64

	// Staged counts the messages this process moved into staging: a move (and a return).
	Staged int64
	// Resent counts the copies this process sent again of messages the target had already
	// confirmed (their acknowledgement on the source was lost, e.g. when the source broker
	// restarted); the target's duplicate detection dropped them. They are not in Relayed. A
	// move.
	Resent int64
	// Returned counts the messages put back on the source queue: a move's return.
	Returned int64
	// Remaining is what stays in staging when a move stopped early.
	Remaining int64
	// ExpiryLost counts the messages with an expiry that reached staging without a record of
	// it, and so the target without one: scheduled messages (the browse that reads expiries
	// skips them) and messages a consumer or producer moved about while they were staged. A
	// move.
	ExpiryLost int64

	// CopySkipped counts the browsed messages the ledger recorded as copied already (by an
	// earlier process, or before a reconnection), which were not sent again: a copy.
	CopySkipped int64
	// CopyIndistinguishable counts the browsed messages identical in identity (properties,
	// application properties, body, header and annotations) to another message of the same walk: no browse can
	// tell them apart, so the target got one of them (see the copy's messageIdentity). A copy.
	CopyIndistinguishable int64
}
