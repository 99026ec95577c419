package core

import (
	"context"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Worker is one run (or one return) in this process, of either mode: what both modes' work
// needs. Each mode keeps its own state beside it (a move's expiry window, a copy's browse).
type Worker struct {
	Source, Target *artemis.Client
	Opts           Options
	Run            Run
	Hooks          Hooks
	Progress       *Tracker
	// targetPolicy is the target address's address-full-policy: BLOCK and FAIL make the relay
	// wait for space.
	targetPolicy string
	// book records the run in the ledger; nil or empty without one.
	Book *Book
	// pace keeps the sends to Options.MaxMessagesPerSecond; nil without a cap.
	pace *pacer
}

// ReadTargetPolicy reads the target address's full policy before relaying.
func (r *Worker) ReadTargetPolicy(ctx context.Context) error {
	settings, err := r.Target.AddressSettings(ctx, r.Run.Spec.Target.Address)
	if err != nil {
		return err
	}
	r.targetPolicy = settings.AddressFullPolicy
	return nil
}
