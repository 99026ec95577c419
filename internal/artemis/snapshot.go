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

// queueSnapshot is the last read of every queue of the broker, by queue name. Its lock is held
// while a read is under way, so that the plans of many transfers at once wait for one read
// rather than each sending its own.
type queueSnapshot struct {
	mu     sync.Mutex
	queues map[string]QueueInfo
	at     time.Time // zero: none taken
}

// forget drops the snapshot: the client changed the broker's queues, and what it reads next
// under a snapshot context must see the change.
func (s *queueSnapshot) forget() {
	s.mu.Lock()
	s.queues, s.at = nil, time.Time{}
	s.mu.Unlock()
}

// snapshotQueue answers Queue from the snapshot when ctx allows one: ok says it did, and then a
// queue missing from the snapshot is an error wrapping ErrNotFound. A snapshot that cannot be
// taken (the pattern read refused, an older broker) leaves the caller to read the queue itself.
func (c *Client) snapshotQueue(ctx context.Context, queue string) (QueueInfo, bool, error) {
	maxAge := snapshotMaxAge(ctx)
	if maxAge <= 0 {
		return QueueInfo{}, false, nil
	}
	s := &c.snapshot
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() || time.Since(s.at) > maxAge {
		queues, err := c.readAllQueues(ctx)
		if err != nil {
			return QueueInfo{}, false, nil //nolint:nilerr // the caller's own read says what is wrong
		}
		s.queues, s.at = queues, time.Now()
	}
	q, found := s.queues[queue]
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
