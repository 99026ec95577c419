package preflight

import (
	"fmt"
	"strings"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

const (
	summaryURLsReachNoManagementNode = "No AMQP URL reaches the management node"
	summaryURLReachesOtherNode       = "An AMQP URL reaches another node than management_url"
	summaryNodeUnverifiable          = "The broker does not identify its node over AMQP"
)

// amqpURLsReachManagementNode checks, for each broker, that its AMQP URLs reach the node its
// management_url reports (or a backup sharing that node's journal, which runs with its node id).
// The relay uses only those URLs: another node has neither the staging queue nor the target's
// duplicate-id cache, so sending there after a failover would double messages. It refuses when
// every URL answered and none reaches the management node, warns when some reach other nodes,
// and counts a URL that did not open as unknown (a passive backup does not accept connections).
func amqpURLsReachManagementNode(f Facts) []Finding {
	var out []Finding
	for _, side := range []struct {
		attribute string
		broker    string
		info      artemis.BrokerInfo
		urls      []artemis.URLNode
	}{
		{"source.broker", f.Source.Broker, f.SourceBroker, f.SourceURLNodes},
		{"target.broker", f.Target.Broker, f.TargetBroker, f.TargetURLNodes},
	} {
		want := side.info.NodeID
		if want == "" || len(side.urls) == 0 {
			continue
		}
		var matching, other, unknown, unverifiable int
		lines := make([]string, len(side.urls))
		for i, u := range side.urls {
			switch {
			case u.Err != nil:
				unknown++
				lines[i] = fmt.Sprintf("%s: unknown (it did not open: %v)", u.URL, u.Err)
			case u.NodeID == "":
				unverifiable++
				lines[i] = fmt.Sprintf("%s: opened, but the broker gives no node id", u.URL)
			case u.NodeID == want:
				matching++
				lines[i] = fmt.Sprintf("%s: node %s, the management node", u.URL, u.NodeID)
			default:
				other++
				lines[i] = fmt.Sprintf("%s: node %s, another node (skipped)", u.URL, u.NodeID)
			}
		}
		listing := strings.Join(lines, "; ")
		switch {
		case other > 0 && matching == 0 && unknown == 0 && unverifiable == 0:
			out = append(out, refuse(side.attribute, summaryURLsReachNoManagementNode,
				"The management_url of broker %q is node %s, but its amqp_urls reach other nodes: %s. The relay sends and "+
					"receives only on node %s or a backup sharing its journal: another node has neither the run's staging queue "+
					"nor the duplicate ids that make a resend after a failover harmless. List an AMQP URL of node %s (and of its "+
					"backups) in amqp_urls, or point management_url at the node the URLs reach, then plan again.",
				side.broker, want, listing, want, want))
		case other > 0:
			out = append(out, warn(side.attribute, summaryURLReachesOtherNode,
				"The management_url of broker %q is node %s; its amqp_urls reach: %s. The relay uses only the URLs that reach "+
					"node %s (or a backup sharing its journal) and skips the others; when none of those is up it waits, within the "+
					"retry budget, instead of failing over to another node, whose duplicate-id cache has never seen the run's "+
					"messages. Remove the other nodes' URLs from amqp_urls to silence this warning.",
				side.broker, want, listing, want))
		case unverifiable > 0 && len(side.urls) > 1:
			out = append(out, warn(side.attribute, summaryNodeUnverifiable,
				"Broker %q (version %s) does not say over AMQP which node a URL reaches: %s. The relay cannot check that each "+
					"of its amqp_urls reaches node %s of management_url or a backup sharing its journal. Make sure that every URL "+
					"does: a failover to another node would double the messages sent past the last confirmation.",
				side.broker, side.info.Version, listing, want))
		}
	}
	return out
}
