package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// verifyCopyTarget checks a finished copy of the scale curve: the target queue holds every
// message of the fill once and nothing else (consumed, which empties it), no staging is left,
// and the source still counts the whole fill. Unlike VerifyCopy it does not consume the source:
// the scale curve moves that same queue next, and the move's check (Verify) then proves that
// the source held every message of the fill once. Its memory is one flag per message of the
// fill, whatever the depth.
func verifyCopyTarget(ctx context.Context, source, target *artemis.Client, srcQueue, tgtQueue string, count, size int, tag, stagingPrefix string) (Check, error) {
	c, err := countQueues(ctx, source, target, srcQueue, tgtQueue, stagingPrefix)
	if err != nil {
		return c, err
	}
	if err := consumeChecked(ctx, target, tgtQueue, count, size, tag, max(c.TargetCount, int64(count)), &c); err != nil {
		return c, err
	}
	c.Problem = strings.Join(copyTargetProblems(c, count), "; ")
	c.OK = c.Problem == ""
	return c, nil
}

// copyTargetProblems lists what is wrong in the check of a copy whose source was counted, not
// consumed.
func copyTargetProblems(c Check, count int) []string {
	var problems []string
	if c.SourceLeft != int64(count) {
		problems = append(problems, fmt.Sprintf("the source counts %d messages after the copy, want %d", c.SourceLeft, count))
	}
	problems = append(problems, targetProblems(c, count)...)
	return problems
}
