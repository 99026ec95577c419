package core

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// ErrInterrupted wraps the error of a run stopped before it finished (cancelled, timed out, a
// broker gone for longer than the retry budget). Nothing is lost: every message is on the
// source, in staging or on the target, and running the same spec again resumes the run.
var ErrInterrupted = errors.New("run interrupted")

// RefusedError is a transfer the refusal rules stopped: a new one before anything moved, a
// resumed one before anything more moved.
type RefusedError struct {
	Findings []preflight.Finding // the errors among the findings
	// ResumedRunID is the run that was not resumed, and StagingQueue where a move's staged
	// messages stay; both empty for a new transfer.
	ResumedRunID, StagingQueue string
}

func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		parts[i] = f.Summary + ": " + f.Detail
		if f.Attribute != "" {
			parts[i] = f.Attribute + ": " + parts[i]
		}
	}
	if e.ResumedRunID != "" {
		return fmt.Sprintf("run %s is not resumed, and its staged messages stay in %s: %s", e.ResumedRunID,
			e.StagingQueue, strings.Join(parts, "; "))
	}
	return "the transfer is refused before anything moved: " + strings.Join(parts, "; ")
}

// ErrRunBusy: another process works on the same run (a move's staging queue admits one
// consumer; the ledger's lease one process).
var ErrRunBusy = errors.New("another process is relaying this run")

// ErrLeaseLost: this process no longer holds the run's lease on the source broker (its one
// consumer of the run's manifest queue), so another process may be working on the run.
var ErrLeaseLost = errors.New("this process no longer holds the run's lease")

// Resumable reports whether a run stopped by cause can be resumed as it is: cancelled, out
// of time, or a broker or the ledger away for longer than the retry budget.
func Resumable(ctx context.Context, cause error) bool {
	return ctx.Err() != nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) ||
		IsConnectionCause(cause) || errors.Is(cause, ledger.ErrUnavailable)
}

// IsConnectionCause reports whether err is a broker gone away or unreachable.
func IsConnectionCause(err error) bool {
	return artemis.IsConnectionLost(err) || errors.Is(err, artemis.ErrUnreachable)
}

// ErrNoSuchRun: the run is not unfinished where its mode keeps it: a move's source broker has no
// staging queue of it, a copy's ledger has it as finished or not at all.
var ErrNoSuchRun = errors.New("no such unfinished run")
