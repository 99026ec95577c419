package bench

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// Sample is where a move's messages are at one moment, and which addresses page: it shows
// whether a long move slows down, and where (issue #15: the rate at a million messages).
type Sample struct {
	At     float64 `json:"at_s"`   // seconds since the move started
	Source int64   `json:"source"` // left on the source queue
	Staged int64   `json:"staged"` // in the run's staging queue (ours only)
	Target int64   `json:"target"` // on the target queue
	// Paging of the source queue's, the staging queue's and the target queue's address.
	SourcePaging  bool `json:"source_paging,omitempty"`
	StagingPaging bool `json:"staging_paging,omitempty"`
	TargetPaging  bool `json:"target_paging,omitempty"`
}

// sampleEvery is the sampling interval of a move of sampleFrom messages or more; smaller moves
// are not sampled (each sample is a few management reads on each broker).
const (
	sampleEvery = 10 * time.Second
	sampleFrom  = 1_000_000
)

// sampleMove reads where the messages of a move are every sampleEvery until stop is called,
// which returns the samples. stagingPrefix finds the run's staging queue ("" for none).
func (b *bench) sampleMove(ctx context.Context, srcQ, tgtQ, stagingPrefix string) (stop func() []Sample) {
	var (
		mu      sync.Mutex
		samples []Sample
	)
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s := b.sample(ctx, srcQ, tgtQ, stagingPrefix)
			s.At = time.Since(start).Seconds()
			mu.Lock()
			samples = append(samples, s)
			mu.Unlock()
		}
	}()
	return func() []Sample {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return samples
	}
}

// sample reads one Sample; a count that cannot be read is -1.
func (b *bench) sample(ctx context.Context, srcQ, tgtQ, stagingPrefix string) Sample {
	s := Sample{Source: -1, Target: -1}
	if q, err := b.srcAdmin.Queue(ctx, srcQ); err == nil {
		s.Source = q.MessageCount
		if u, err := b.srcAdmin.AddressUsage(ctx, q.Address); err == nil {
			s.SourcePaging = u.Paging
		}
	}
	if q, err := b.tgtAdmin.Queue(ctx, tgtQ); err == nil {
		s.Target = q.MessageCount
		if u, err := b.tgtAdmin.AddressUsage(ctx, q.Address); err == nil {
			s.TargetPaging = u.Paging
		}
	}
	if stagingPrefix == "" {
		return s
	}
	queues, err := b.srcAdmin.ListQueues(ctx, stagingPrefix)
	if err != nil {
		s.Staged = -1
		return s
	}
	names := map[string]bool{}
	for _, q := range queues {
		names[q.Name] = true
	}
	for _, q := range queues {
		// The run's staging queue is the one with a manifest queue beside it.
		if !names[transfer.ManifestQueue(strings.TrimPrefix(q.Name, transfer.StagingPrefix))] {
			continue
		}
		s.Staged += q.MessageCount
		if u, err := b.srcAdmin.AddressUsage(ctx, q.Address); err == nil && u.Paging {
			s.StagingPaging = true
		}
	}
	return s
}
