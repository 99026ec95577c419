package artemis

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Divert is a divert the broker applies to messages sent to an address.
type Divert struct {
	Name              string
	Address           string // the address it applies to, perhaps a wildcard pattern
	ForwardingAddress string
	// Exclusive diverts take a matching message off its address: no queue of the address gets
	// it, not even one a sender named by its fully qualified name.
	Exclusive bool
	Filter    string // empty: every message
}

// maxDiverts bounds how many divert MBeans Diverts reads one by one.
const maxDiverts = 1000

// Diverts lists the diverts that apply to address: those bound to it by name or by a wildcard
// pattern (the broker's default wildcard syntax: '.' between words, '*' one word, '#' any
// number).
func (c *Client) Diverts(ctx context.Context, address string) ([]Divert, error) {
	all, err := snapshotted(ctx, c, "diverts", c.allDiverts)
	if err != nil {
		return nil, fmt.Errorf("listing the diverts of address %q: %w", address, err)
	}
	var out []Divert
	for _, dv := range all {
		if addressMatches(dv.Address, address) {
			out = append(out, dv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// allDiverts reads every divert of the broker.
func (c *Client) allDiverts(ctx context.Context) ([]Divert, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return nil, err
	}
	found, err := c.search(ctx, brokerMBean(broker)+",component=addresses,address=*,subcomponent=diverts,divert=*")
	if err != nil {
		return nil, err
	}
	if len(found) > maxDiverts {
		return nil, fmt.Errorf("broker %q: %d diverts, more than the %d a check reads", c.cfg.Name, len(found), maxDiverts)
	}
	var all []Divert
	for _, mbean := range found {
		v, err := c.read(ctx, mbean, "UniqueName", "Address", "ForwardingAddress", "Exclusive", "Filter")
		if errors.Is(err, ErrNotFound) {
			continue // removed since the search
		}
		if err != nil {
			return nil, fmt.Errorf("reading a divert of broker %q: %w", c.cfg.Name, err)
		}
		var dv Divert
		d := attrDecoder{values: v}
		d.str("UniqueName", &dv.Name)
		d.str("Address", &dv.Address)
		d.str("ForwardingAddress", &dv.ForwardingAddress)
		d.boolean("Exclusive", &dv.Exclusive)
		d.str("Filter", &dv.Filter)
		if d.err != nil {
			return nil, fmt.Errorf("broker %q: reading divert %s: %w", c.cfg.Name, mbean, d.err)
		}
		all = append(all, dv)
	}
	return all, nil
}

// addressMatches reports whether an address match (a plain address or a pattern in the
// broker's default wildcard syntax) covers address.
func addressMatches(pattern, address string) bool {
	return wordsMatch(strings.Split(pattern, "."), strings.Split(address, "."))
}

func wordsMatch(pattern, words []string) bool {
	if len(pattern) == 0 {
		return len(words) == 0
	}
	switch pattern[0] {
	case "#":
		// '#' takes zero or more words; the pattern is short, so trying each split is cheap.
		for i := 0; i <= len(words); i++ {
			if wordsMatch(pattern[1:], words[i:]) {
				return true
			}
		}
		return false
	case "*":
		return len(words) > 0 && wordsMatch(pattern[1:], words[1:])
	default:
		return len(words) > 0 && pattern[0] == words[0] && wordsMatch(pattern[1:], words[1:])
	}
}

// AddressUsage is how full an address is now.
type AddressUsage struct {
	// SizeBytes is the memory the address's messages use (paged messages excluded).
	SizeBytes int64
	// Messages is the number of messages the address holds, paged ones included.
	Messages int64
	// LimitPercent is SizeBytes (or Messages) as a percentage of the address's own
	// max-size-bytes (or max-size-messages); 0 when it has no limit of its own.
	LimitPercent int
	// Paging reports whether the address is paging.
	Paging bool
}

// AddressUsage reads how full an address is.
func (c *Client) AddressUsage(ctx context.Context, address string) (AddressUsage, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return AddressUsage{}, err
	}
	v, err := c.read(ctx, addressMBean(broker, address), "AddressSize", "NumberOfMessages", "AddressLimitPercent", "Paging")
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return AddressUsage{}, fmt.Errorf("broker %q: address %q does not exist: %w", c.cfg.Name, address, ErrNotFound)
		}
		return AddressUsage{}, fmt.Errorf("reading the usage of address %q: %w", address, err)
	}
	var u AddressUsage
	d := attrDecoder{values: v}
	d.int64("AddressSize", &u.SizeBytes)
	d.int64("NumberOfMessages", &u.Messages)
	d.integer("AddressLimitPercent", &u.LimitPercent)
	d.boolean("Paging", &u.Paging)
	if d.err != nil {
		return AddressUsage{}, fmt.Errorf("broker %q: usage of address %q: %w", c.cfg.Name, address, d.err)
	}
	return u, nil
}
