package provider

// The sentence every error that stops an apply ends with: what the operator does next. It is
// decided from the error's type, never from its text, so that a new error of the engine or the
// broker client falls into a step that holds for it (apply again, wait for the holder, fix a
// credential, return the staged messages) rather than into silence.

import (
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// stoppedRun is what the next step of a stopped apply names.
type stoppedRun struct {
	// RunID is the run the apply worked on; "" when none was started (nothing moved).
	RunID string
	// SourceBroker is the source's broker key: a move's staging queue is there.
	SourceBroker string
	// Copy is true for a copy, which stages nothing and leaves the source as it was.
	Copy bool
}

// applyAgain says what the next apply does with the run.
func (s stoppedRun) applyAgain() string {
	if s.RunID == "" {
		return "run terraform apply again"
	}
	return fmt.Sprintf("run terraform apply again, which resumes run %s", s.RunID)
}

// returnBlock is the resource that puts a move's staged messages back on their source queue.
func (s stoppedRun) returnBlock() string {
	return fmt.Sprintf("an artemis_transfer_return resource with broker = %q and run_id = %q", s.SourceBroker, s.RunID)
}

// nextStep is the one sentence that tells the operator what to do after err stopped an apply
// of run s.
func nextStep(err error, s stoppedRun) string {
	var held *ledger.LeaseHeldError
	var refused *transfer.RefusedError
	switch {
	case errors.As(err, &refused):
		if refused.ResumedRunID != "" {
			return fmt.Sprintf("Next: fix what the findings above name, then run terraform apply again, which resumes run %s; nothing of it moved in this apply.", refused.ResumedRunID)
		}
		return "Next: fix what the findings above name, then run terraform apply again; nothing moved."
	case errors.As(err, &held):
		return fmt.Sprintf("Next: let the apply of %s finish, then run terraform apply again, which finds run %s finished or resumes it; if that process is gone, apply again after %s, when its lease lapses.",
			held.Holder, held.RunID, held.ExpiresAt.UTC().Format(time.RFC3339))
	case errors.Is(err, transfer.ErrRunBusy) && s.Copy:
		return "Next: let the other apply copying this transfer finish, then adopt its run with terraform import (the error names the run) rather than apply again, which would copy the transfer a second time."
	case errors.Is(err, transfer.ErrRunBusy):
		return fmt.Sprintf("Next: let the other process working on the run finish (or stop it), then %s.", s.applyAgain())
	case errors.Is(err, ledger.ErrLeaseLost), errors.Is(err, transfer.ErrLeaseLost):
		return fmt.Sprintf("Next: %s; another process took the run over, and the next apply finds it finished or carries on from where that process stopped.", s.applyAgain())
	case errors.Is(err, transfer.ErrTargetDiscards) && s.Copy:
		return "Next: find what drops the messages sent to the target queue (the error names the counts) and remove it, then run terraform apply again, which copies as a new run; nothing was copied."
	case errors.Is(err, transfer.ErrTargetDiscards):
		return fmt.Sprintf("Next: find what drops the messages sent to the target queue (the error names the counts) and remove it, then put the staged messages back on the source queue with %s, and run terraform apply again, which moves them as a new run; applying again before the return stops the same way.", s.returnBlock())
	case errors.Is(err, ledger.ErrSchemaTooNew):
		return "Next: apply with the provider version that last migrated the ledger, or a newer one (see the required_providers version constraint); nothing moved."
	case errors.Is(err, artemis.ErrUnauthorized):
		return fmt.Sprintf("Next: correct the broker's username and password in the provider's brokers (or its ARTEMIS_<KEY>_PASSWORD), then %s.", s.applyAgain())
	case errors.Is(err, artemis.ErrForbidden):
		return fmt.Sprintf("Next: grant the broker user the permission named above (the broker permissions guide lists each one), then %s.", s.applyAgain())
	case errors.Is(err, artemis.ErrUntrustedCertificate):
		return fmt.Sprintf("Next: give the broker's CA certificate in the broker's ca_cert_pem (or fix the broker's certificate), then %s.", s.applyAgain())
	case errors.Is(err, ledger.ErrUnavailable):
		return fmt.Sprintf("Next: once the ledger's PostgreSQL (ledger_dsn) answers again, %s.", s.applyAgain())
	case errors.Is(err, transfer.ErrInterrupted), artemis.IsConnectionLost(err),
		errors.Is(err, artemis.ErrUnreachable):
		return fmt.Sprintf("Next: %s where it stopped; the resource is not tainted, and no message was lost or doubled.", s.applyAgain())
	case s.RunID == "":
		return "Next: fix what the error names, then run terraform apply again; nothing moved."
	case s.Copy:
		return fmt.Sprintf("Next: %s; if it stops the same way, fix what the error names and apply again (a copy changes nothing on the source, and the ledger keeps what was copied).", s.applyAgain())
	default:
		return fmt.Sprintf("Next: %s; if it stops the same way, put the staged messages back on the source queue with %s, then apply again.", s.applyAgain(), s.returnBlock())
	}
}
