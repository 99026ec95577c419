package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// migrationCheckers is how many queues are checked at once.
const migrationCheckers = 4

// maxMigrationProblems bounds the problems a check keeps: one line per wrong queue.
const maxMigrationProblems = 20

// MigrationCheck is what both brokers held after a migration. Every queue is checked as the
// move benchmark checks one (Verify): its source empty, its target counting exactly the
// queue's depth, and consuming the target (which empties it) yielding every sequence number of
// the queue's fill exactly once and nothing else. An empty queue is checked by the two counts.
type MigrationCheck struct {
	Queues   int `json:"queues"`
	QueuesOK int `json:"queues_ok"`
	// Consumed are the queues whose target was consumed and each message's number checked.
	Consumed    int   `json:"consumed"`
	SourceLeft  int64 `json:"source_left"`
	TargetCount int64 `json:"target_count"`
	Received    int64 `json:"received"`
	Distinct    int64 `json:"distinct"`
	Duplicates  int64 `json:"duplicates"`
	Foreign     int64 `json:"foreign"`
	// StagingLeft are staging queues (studio.transfer.*) left on the source: none may remain.
	StagingLeft int      `json:"staging_left"`
	Problems    []string `json:"problems,omitempty"`
	Seconds     float64  `json:"seconds"`
}

// OK says whether every queue arrived whole, once, and nothing was left behind.
func (c MigrationCheck) OK() bool {
	return c.Queues > 0 && c.QueuesOK == c.Queues && c.StagingLeft == 0 && len(c.Problems) == 0
}

// Problem sums up what went wrong; empty when nothing did.
func (c MigrationCheck) Problem() string {
	var parts []string
	if c.QueuesOK < c.Queues {
		parts = append(parts, fmt.Sprintf("%d of %d queues wrong", c.Queues-c.QueuesOK, c.Queues))
	}
	if c.StagingLeft > 0 {
		parts = append(parts, fmt.Sprintf("%d staging queues left on the source", c.StagingLeft))
	}
	return strings.Join(append(parts, c.Problems...), "; ")
}

// add counts one queue's check in.
func (c *MigrationCheck) add(name string, q Check) {
	c.Queues++
	c.SourceLeft += q.SourceLeft
	c.TargetCount += q.TargetCount
	c.Received += q.Received
	c.Distinct += q.Distinct
	c.Duplicates += q.Duplicates
	c.Foreign += q.Foreign
	if q.OK {
		c.QueuesOK++
		return
	}
	c.problem(name + ": " + q.Problem)
}

func (c *MigrationCheck) problem(p string) {
	if len(c.Problems) < maxMigrationProblems {
		c.Problems = append(c.Problems, p)
	}
}

// checkMigration checks every queue of the run. Staging queues are looked for once, on the
// whole source broker (the benchmark's brokers run nothing else).
func (m *migration) checkMigration(ctx context.Context, prefix string, staging bool) (MigrationCheck, error) {
	start := time.Now()
	var (
		mu    sync.Mutex
		check MigrationCheck
	)
	err := m.eachQueue(ctx, migrationCheckers, func(ctx context.Context, q MigrationQueue) error {
		name := queueName(prefix, q)
		var (
			c   Check
			err error
		)
		if q.Count > 0 {
			c, err = Verify(ctx, m.srcAdmin, m.tgtAdmin, name, name, q.Count, q.Size, name, "")
		} else {
			c, err = m.checkEmpty(ctx, name)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			// A queue that cannot be checked (its target missing, say) is a wrong queue.
			check.Queues++
			check.problem(name + ": " + err.Error())
			return nil
		}
		check.add(name, c)
		if q.Count > 0 {
			check.Consumed++
		}
		return nil
	})
	if err != nil {
		return check, err
	}
	if staging {
		left, err := m.srcAdmin.ListQueues(ctx, transfer.StagingPrefix)
		if err != nil {
			return check, fmt.Errorf("looking for staging left on the source: %w", err)
		}
		check.StagingLeft = len(left)
	}
	check.Seconds = time.Since(start).Seconds()
	return check, nil
}

// checkEmpty checks a queue the layout left empty: it must exist on both brokers, empty.
func (m *migration) checkEmpty(ctx context.Context, name string) (Check, error) {
	var c Check
	sq, err := m.srcAdmin.Queue(ctx, name)
	if err != nil {
		return c, fmt.Errorf("checking the source queue: %w", err)
	}
	tq, err := m.tgtAdmin.Queue(ctx, name)
	if err != nil {
		return c, fmt.Errorf("checking the target queue: %w", err)
	}
	c.SourceLeft, c.TargetCount = sq.MessageCount, tq.MessageCount
	c.OK = c.SourceLeft == 0 && c.TargetCount == 0
	if !c.OK {
		c.Problem = fmt.Sprintf("an empty queue counts %d on the source and %d on the target", c.SourceLeft, c.TargetCount)
	}
	return c, nil
}
