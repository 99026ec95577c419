package artemis

import (
	"context"
	"encoding/json"
	"fmt"
)

// CountMatches counts the messages of a queue that match filter, up to limit, in-memory and
// paged alike, without listing them. The broker's filtered countMessages examines only the
// first management-browse-page-size messages (200 by default), and BrowseMessages answers with
// every match, which costs the broker about a millisecond a message; browse(page, 1, filter)
// answers with the page-th match alone, so CountMatches asks whether there are limit matches,
// then whether there is one, and only between the two searches for the count by halves. Like
// a browse, it does not see scheduled messages or messages being delivered to a consumer.
func (c *Client) CountMatches(ctx context.Context, queue, filter string, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	// hasMatch reports whether the queue holds at least n matches (n >= 1).
	hasMatch := func(n int) (bool, error) {
		var raw json.RawMessage
		err := c.onQueue(ctx, queue, func(mbean string) (err error) {
			raw, err = c.exec(ctx, mbean, "browse(int,int,java.lang.String)", n, 1, filterArg(filter))
			return err
		})
		if err != nil {
			return false, fmt.Errorf("counting the messages of %q that match a filter: %w", queue, err)
		}
		var rows []json.RawMessage
		if err := json.Unmarshal(raw, &rows); err != nil {
			return false, fmt.Errorf("broker %q: decoding browsed messages: %w", c.cfg.Name, err)
		}
		return len(rows) > 0, nil
	}
	if all, err := hasMatch(limit); err != nil || all {
		return limit, err
	}
	// Invariant: at least lo matches, fewer than hi.
	lo, hi := 0, limit
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if lo == 0 {
			mid = 1 // none at all is the other common answer
		}
		ok, err := hasMatch(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}
