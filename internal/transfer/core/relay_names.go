package core

import (
	"fmt"
	"strconv"
	"strings"
)

// The link names of the senders that relay a run's messages to its target, one per mode: the
// target broker lists its producers under their link names, so a plan can tell which runs
// send to a target queue now, and how many messages each may have awaiting confirmation.
const (
	relayLinkPrefix = "studio-relay/"
	copyLinkPrefix  = "studio-copy/"
)

// RelayLinkName is the name of the sender link that relays run runID, in mode, with batches
// of batch messages.
func RelayLinkName(mode Mode, runID string, batch int) string {
	prefix := relayLinkPrefix
	if mode == ModeCopy {
		prefix = copyLinkPrefix
	}
	return fmt.Sprintf("%s%s/batch=%d", prefix, runID, batch)
}

// ParseRelayLinkName reads a link name RelayLinkName wrote; ok is false for any other name.
func ParseRelayLinkName(name string) (runID string, batch int, ok bool) {
	rest, found := strings.CutPrefix(name, relayLinkPrefix)
	if !found {
		if rest, found = strings.CutPrefix(name, copyLinkPrefix); !found {
			return "", 0, false
		}
	}
	runID, size, found := strings.Cut(rest, "/batch=")
	if !found || runID == "" {
		return "", 0, false
	}
	batch, err := strconv.Atoi(size)
	if err != nil || batch <= 0 {
		return "", 0, false
	}
	return runID, batch, true
}
