package provider

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// stagingPauseLimit bounds how long a runStopper holds staging: only a run that fails before
// its n-th confirmation waits this long, and the test then fails on the run not being stopped.
const stagingPauseLimit = 2 * time.Minute

// runStopper stops the first transfer run it is given hooks for at a precise point, whatever the
// machine's speed: staging pauses after its first chunk, so exactly one chunk has left the source;
// once the target has confirmed `confirms` messages of that chunk, the run's context is cancelled
// and staging is released, and staging sees the cancel before it asks for another chunk. The
// relay settles the batches it has in flight (at most two) and stops, so part of the chunk stays
// staged: a run half done, on a fast machine as on a slow one. confirms plus two batches must be
// less than the chunk. (Messages with an expiry are staged window by window, relaying each window
// in the staging goroutine before the next; the fixtures here have none.)
type runStopper struct {
	confirms int64
	used     atomic.Bool
	done     atomic.Bool
}

func newRunStopper(confirms int64) *runStopper { return &runStopper{confirms: confirms} }

// hooks returns the hooks that stop the first run, and none for every later run (the resume).
func (s *runStopper) hooks(cancel context.CancelFunc) transfer.Hooks {
	if !s.used.CompareAndSwap(false, true) {
		return transfer.Hooks{}
	}
	release := make(chan struct{})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			s.done.Store(true)
			cancel() // before the release, so that staging sees it
			close(release)
		})
	}
	var chunks, confirmed atomic.Int64
	return transfer.Hooks{
		AfterStageChunk: func() {
			if chunks.Add(1) != 1 {
				return
			}
			select {
			case <-release:
			case <-time.After(stagingPauseLimit):
			}
		},
		AfterConfirm: func() {
			if confirmed.Add(1) == s.confirms {
				stop()
			}
		},
	}
}

// stopped reports whether the run was stopped at its point (and not, say, failed before it).
func (s *runStopper) stopped() bool { return s.done.Load() }

// testAccFactoriesWithRunHooks serves, like testAccProtoV6ProviderFactories, a provider whose
// transfer engines get their hooks from h.
func testAccFactoriesWithRunHooks(h runHooks) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"artemis": providerserver.NewProtocol6WithError(&artemisProvider{version: "test", runHooks: h}),
	}
}
