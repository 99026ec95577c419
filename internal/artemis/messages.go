package artemis

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// MoveRequest is one broker-side move from a queue into another queue of the same broker.
type MoveRequest struct {
	Queue       string // the queue messages leave
	Filter      string // Core filter; empty: every message
	TargetQueue string // plain or fully qualified queue name
	// FlushLimit is how many paged references the broker handles between commits of its scan.
	// Zero means 500, the broker's own default.
	FlushLimit int
	// RejectDuplicates true makes the broker delete a message whose duplicate id the target
	// already has. It is destructive; staging always uses false.
	RejectDuplicates bool
	// Count bounds how many messages one call moves, so that the call stays well inside the
	// broker's one-minute management lock. Zero or less means no limit.
	Count int
	// Fence, when set, is checked before each attempt of the move: the first, and each retry
	// after the broker refused it as busy. A move whose fence fails is not tried, and the
	// fence's error is returned. A caller that holds a lease on the queues checks it there, so
	// that a retry seconds later never moves messages for a process that lost its lease meanwhile.
	Fence func(context.Context) error
}

// MoveMessages moves messages broker-side and returns how many were moved. Each message is moved
// in its own broker transaction: a call that fails midway has moved a prefix, never a message
// into both queues or neither.
func (c *Client) MoveMessages(ctx context.Context, req MoveRequest) (int, error) {
	flush := req.FlushLimit
	if flush <= 0 {
		flush = 500
	}
	move := func(mbean string) (json.RawMessage, error) {
		return c.execFenced(ctx, req.Fence, mbean, "moveMessages(int,java.lang.String,java.lang.String,boolean,int)",
			flush, filterArg(req.Filter), req.TargetQueue, req.RejectDuplicates, req.Count)
	}
	var raw json.RawMessage
	err := c.onQueue(ctx, req.Queue, func(mbean string) (err error) {
		raw, err = move(mbean)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("moving messages from %q to %q: %w", req.Queue, req.TargetQueue, err)
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("broker %q: decoding moved count: %w", c.cfg.Name, err)
	}
	return n, nil
}

// CountMessages counts a queue's messages that match a filter. The broker examines at most
// management-browse-page-size (200 by default) messages for a filtered count, so a result of
// that size is a lower bound: keep filters selective (e.g. a short list of ids).
func (c *Client) CountMessages(ctx context.Context, queue, filter string) (int64, error) {
	var raw json.RawMessage
	err := c.onQueue(ctx, queue, func(mbean string) (err error) {
		raw, err = c.exec(ctx, mbean, "countMessages(java.lang.String)", filter)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("counting messages of %q: %w", queue, err)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("broker %q: decoding a message count: %w", c.cfg.Name, err)
	}
	return n, nil
}

// MoveMessage moves one message, by its broker id, to another queue of the same broker. It
// reports false when the queue holds no such message in memory (the broker's by-id operations
// do not see paged or scheduled messages).
func (c *Client) MoveMessage(ctx context.Context, queue string, messageID int64, targetQueue string) (bool, error) {
	var raw json.RawMessage
	err := c.onQueue(ctx, queue, func(mbean string) (err error) {
		raw, err = c.exec(ctx, mbean, "moveMessage(long,java.lang.String,boolean)", messageID, targetQueue, false)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("moving message %d from %q to %q: %w", messageID, queue, targetQueue, err)
	}
	var moved bool
	if err := json.Unmarshal(raw, &moved); err != nil {
		return false, fmt.Errorf("broker %q: decoding a move result: %w", c.cfg.Name, err)
	}
	return moved, nil
}

// filterArg passes a filter to an operation: an empty one as null, which the broker reads as
// "every message".
func filterArg(filter string) any {
	if filter == "" {
		return nil
	}
	return filter
}

// BrowsedMessage is a message as the broker's management browse shows it.
type BrowsedMessage struct {
	// ID is the broker's id of the message on this queue.
	ID int64
	// Expiration is the message's absolute expiry in Unix milliseconds; 0 when it has none.
	Expiration int64
}

// BrowseMessages returns the first limit messages of a queue that match filter, in the queue's
// delivery order, in-memory and paged alike (browse(int,int,String), page 1). Unlike the
// listing and the filtered count, it looks past the head of the queue: it walks the queue
// until it has limit matches, so a selective filter on a deep queue costs a scan. It does not
// see scheduled messages or messages being delivered to a consumer.
func (c *Client) BrowseMessages(ctx context.Context, queue, filter string, limit int) ([]BrowsedMessage, error) {
	var raw json.RawMessage
	err := c.onQueue(ctx, queue, func(mbean string) (err error) {
		raw, err = c.exec(ctx, mbean, "browse(int,int,java.lang.String)", 1, limit, filterArg(filter))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("browsing the messages of %q: %w", queue, err)
	}
	var rows []struct {
		MessageID  json.Number `json:"messageID"`
		Expiration json.Number `json:"expiration"`
	}
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("broker %q: decoding browsed messages: %w", c.cfg.Name, err)
	}
	out := make([]BrowsedMessage, 0, len(rows))
	for _, row := range rows {
		id, err := strconv.ParseInt(row.MessageID.String(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("broker %q: a browsed message has id %q: %w", c.cfg.Name, row.MessageID, err)
		}
		exp, _ := row.Expiration.Int64()
		out = append(out, BrowsedMessage{ID: id, Expiration: exp})
	}
	return out, nil
}

// ListMessages lists a queue's messages with their properties, as the broker's management
// shows them: at most management-browse-page-size (200 by default) of them, property values
// truncated to 256 characters. It sees messages that MessageCount may not count.
func (c *Client) ListMessages(ctx context.Context, queue, filter string) ([]map[string]any, error) {
	var raw json.RawMessage
	err := c.onQueue(ctx, queue, func(mbean string) (err error) {
		raw, err = c.exec(ctx, mbean, "listMessagesAsJSON(java.lang.String)", filterArg(filter))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the messages of %q: %w", queue, err)
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, fmt.Errorf("broker %q: decoding a message list: %w", c.cfg.Name, err)
	}
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(text), &msgs); err != nil {
		return nil, fmt.Errorf("broker %q: decoding a message list: %w", c.cfg.Name, err)
	}
	return msgs, nil
}
