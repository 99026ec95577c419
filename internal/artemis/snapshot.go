package artemis

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// snapshotAgeKey carries, in a context, how old a snapshot of the broker's queues the reads
// under it may be answered from.
type snapshotAgeKey struct{}

// WithSnapshotReads returns a context under which a client answers Queue from one read of every
// queue of its broker, taken at most maxAge before, instead of two requests per queue. It is for
// reads that only show the operator what a change would meet (a plan of many transfers reads the
// same broker once instead of once per transfer); a run's own reads never carry it, since what
// it moves must be read as it is now. A queue created after the snapshot is not found under it
// until the snapshot is older than maxAge.
func WithSnapshotReads(ctx context.Context, maxAge time.Duration) context.Context {
	return context.WithValue(ctx, snapshotAgeKey{}, maxAge)
}

func snapshotMaxAge(ctx context.Context) time.Duration {
	age, _ := ctx.Value(snapshotAgeKey{}).(time.Duration)
	return age
}

// snapshotReads holds, by what was read, the reads made under a snapshot context: every
// queue, and facts of the whole broker that each transfer's check asks for again (its memory,
// its producers, its diverts, its runs).
type snapshotReads struct {
	mu      sync.Mutex
	entries map[string]*snapshotEntry
}

// snapshotEntry is one read and when it was made. Its lock is held while the read is under way,
// so that the checks of many transfers at once wait for one read rather than each sending its own.
type snapshotEntry struct {
	mu    sync.Mutex
	value any
	at    time.Time // zero: not read yet
}

func (s *snapshotReads) entry(key string) *snapshotEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = map[string]*snapshotEntry{}
	}
	e, ok := s.entries[key]
	if !ok {
		e = &snapshotEntry{}
		s.entries[key] = e
	}
	return e
}

// forget drops every read: the client changed its broker, and what it reads next under a
// snapshot context must see the change. A read under way finishes first, so none taken before
// the change outlives it.
func (s *snapshotReads) forget() {
	s.mu.Lock()
	entries := s.entries
	s.entries = nil
	s.mu.Unlock()
	for _, e := range entries {
		e.mu.Lock()
		e.value, e.at = nil, time.Time{}
		e.mu.Unlock()
	}
}

// snapshotted answers read from the client's snapshot of key when ctx allows one (at most
// maxAge old, else read again and kept); without a snapshot context it reads. A failed read is
// not kept.
func snapshotted[T any](ctx context.Context, c *Client, key string, read func(context.Context) (T, error)) (T, error) {
	maxAge := snapshotMaxAge(ctx)
	if maxAge <= 0 {
		return read(ctx)
	}
	e := c.snapshot.entry(key)
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.value.(T); ok && !e.at.IsZero() && time.Since(e.at) <= maxAge {
		return v, nil
	}
	v, err := read(ctx)
	if err != nil {
		return v, err
	}
	e.value, e.at = v, time.Now()
	return v, nil
}

// snapshotQueue answers Queue from the snapshot of every queue when ctx allows one: ok says it
// did, and then a queue missing from the snapshot is an error wrapping ErrNotFound. A snapshot
// that cannot be taken (the pattern read refused, an older broker) leaves the caller to read
// the queue itself.
func (c *Client) snapshotQueue(ctx context.Context, queue string) (QueueInfo, bool, error) {
	if snapshotMaxAge(ctx) <= 0 {
		return QueueInfo{}, false, nil
	}
	queues, err := snapshotted(ctx, c, "queues", c.readAllQueues)
	if err != nil {
		return QueueInfo{}, false, nil //nolint:nilerr // the caller's own read says what is wrong
	}
	q, found := queues[queue]
	if !found {
		return QueueInfo{}, true, fmt.Errorf("broker %q: queue %q does not exist: %w", c.cfg.Name, queue, ErrNotFound)
	}
	return q, true, nil
}

// readAllQueues reads the queueAttributes of every queue MBean of the broker in one request (a
// pattern read) and remembers each queue's MBean name for the calls that follow.
func (c *Client) readAllQueues(ctx context.Context) (map[string]QueueInfo, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return nil, err
	}
	pattern := brokerMBean(broker) + ",component=addresses,address=*,subcomponent=queues,routing-type=*,queue=*"
	resps, err := c.jolokia(ctx, jolokiaRequest{Type: "read", MBean: pattern, Attribute: queueAttributes, Config: map[string]any{"ignoreErrors": true}})
	if err != nil {
		return nil, err
	}
	r := resps[0]
	if r.Status != http.StatusOK {
		return nil, c.responseError("reading every queue", r)
	}
	var byMBean map[string]map[string]json.RawMessage
	if err := json.Unmarshal(r.Value, &byMBean); err != nil {
		return nil, fmt.Errorf("broker %q: decoding the read of every queue: %w", c.cfg.Name, err)
	}
	queues := make(map[string]QueueInfo, len(byMBean))
	for mbean, values := range byMBean {
		if err := c.dropMissingAttributes(values); err != nil {
			return nil, err
		}
		q, err := decodeQueueInfo(values)
		if err != nil {
			return nil, fmt.Errorf("broker %q: reading every queue, %s: %w", c.cfg.Name, mbean, err)
		}
		if q.Name == "" {
			continue // an MBean that went away while the broker answered
		}
		queues[q.Name] = q
		c.queueMBeans.put(q.Name, mbean)
	}
	return queues, nil
}
