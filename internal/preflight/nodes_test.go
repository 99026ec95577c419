package preflight

import (
	"errors"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

func urls(nodes ...artemis.URLNode) []artemis.URLNode { return nodes }

var (
	usNode     = artemis.URLNode{URL: "amqp://us1:5672", NodeID: "node-us"}
	usBackup   = artemis.URLNode{URL: "amqp://us1-backup:5672", NodeID: "node-us"} // runs with its primary's id
	usOther    = artemis.URLNode{URL: "amqp://us2:5672", NodeID: "node-us2"}
	usDown     = artemis.URLNode{URL: "amqp://us3:5672", Err: errors.New("connection refused")}
	usNoNodeID = artemis.URLNode{URL: "amqp://old:5672"}
	euOther    = artemis.URLNode{URL: "amqp://eu2:5672", NodeID: "node-eu2"}
)

func TestCheck_RefusesAMQPURLsThatReachNoManagementNode(t *testing.T) {
	checkRule(t, summaryURLsReachNoManagementNode, []ruleCase{
		{"URLs not probed", nil, nil},
		{"the management node", func(f *Facts) { f.TargetURLNodes = urls(usNode) }, nil},
		{"node and its backup", func(f *Facts) { f.TargetURLNodes = urls(usNode, usBackup) }, nil},
		{"only another node", func(f *Facts) { f.TargetURLNodes = urls(usOther) },
			refusal("target.broker", "node-us", "amqp://us2:5672: node node-us2, another node")},
		{"only another node, on the source", func(f *Facts) { f.SourceURLNodes = urls(euOther) },
			refusal("source.broker", "node-eu", "amqp://eu2:5672: node node-eu2")},
		{"another node and an unreachable URL", func(f *Facts) { f.TargetURLNodes = urls(usOther, usDown) }, nil},
		{"unreachable only", func(f *Facts) { f.TargetURLNodes = urls(usDown) }, nil},
		{"management node id unknown", func(f *Facts) { f.TargetURLNodes = urls(usOther); f.TargetBroker.NodeID = "" }, nil},
	})
}

func TestCheck_WarnsOfAMQPURLsThatReachAnotherNode(t *testing.T) {
	checkRule(t, summaryURLReachesOtherNode, []ruleCase{
		{"the management node", func(f *Facts) { f.TargetURLNodes = urls(usNode) }, nil},
		{"node and its backup", func(f *Facts) { f.TargetURLNodes = urls(usNode, usBackup) }, nil},
		{"passive backup down", func(f *Facts) { f.TargetURLNodes = urls(usNode, usDown) }, nil},
		{"two cluster nodes", func(f *Facts) { f.TargetURLNodes = urls(usNode, usOther) },
			warning("target.broker", "amqp://us1:5672: node node-us, the management node", "amqp://us2:5672: node node-us2, another node (skipped)", "skips the others")},
		{"another node first", func(f *Facts) { f.TargetURLNodes = urls(usOther, usNode) },
			warning("target.broker", "amqp://us2:5672: node node-us2, another node (skipped)")},
		{"another node and an unreachable URL", func(f *Facts) { f.TargetURLNodes = urls(usOther, usDown) },
			warning("target.broker", "amqp://us3:5672: unknown (it did not open: connection refused)")},
		{"only another node is refused, not warned", func(f *Facts) { f.TargetURLNodes = urls(usOther) }, nil},
	})
}

func TestCheck_WarnsWhenTheBrokerGivesNoNodeID(t *testing.T) {
	checkRule(t, summaryNodeUnverifiable, []ruleCase{
		{"one URL", func(f *Facts) { f.SourceURLNodes = urls(usNoNodeID) }, nil},
		{"several URLs", func(f *Facts) { f.SourceURLNodes = urls(usNoNodeID, usNoNodeID) },
			warning("source.broker", "amqp://old:5672: opened, but the broker gives no node id", "2.40.0")},
	})
}
