package core

import (
	"errors"
	"fmt"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Table tests of the recognition of a filter the broker refused.

func TestFilterError_ReturnsTheBrokersWordsForARefusedFilter(t *testing.T) {
	// The broker's refusal is classified by internal/artemis; the engine takes its words.
	refused := &artemis.FilterError{Reason: "AMQ229020: Invalid filter: color = = 'x'"}
	msg, ok := filterError(fmt.Errorf("preflight of run r1: %w", refused))
	if !ok || msg != refused.Reason {
		t.Errorf("filterError = %q, %v; want %q, true", msg, ok, refused.Reason)
	}
}

func TestFilterError_LeavesOtherBrokerErrorsToTheCaller(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf(`broker "source": management endpoint http://127.0.0.1:8261 is unreachable: %w`, artemis.ErrUnreachable),
		fmt.Errorf(`broker "source": queue orders: %w`, artemis.ErrNotFound),
		errors.New(`broker "source": calling countMessages(java.lang.String): AMQ229017: Queue orders does not exist`),
		errors.New(`broker "source": user "viewer" lacks the right for countMessages`),
	} {
		if msg, ok := filterError(err); ok {
			t.Errorf("filterError(%q) = %q, true; want it left to the caller", err, msg)
		}
	}
}
