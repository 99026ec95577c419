package artemis

import (
	"fmt"
	"strings"
)

// legacyAddAddressSettingsOp is the positional addAddressSettings form of Artemis 2.14 to 2.31
// (deprecated in 2.32, when the JSON form arrived). It sets every field of the entry.
const legacyAddAddressSettingsOp = "addAddressSettings(" +
	"java.lang.String,java.lang.String,java.lang.String,long,boolean,int,long,int,int,long,double,long,long,boolean," +
	"java.lang.String,long,long,java.lang.String,boolean,boolean,boolean,boolean,boolean,boolean,boolean,boolean," +
	"java.lang.String,java.lang.String,long,java.lang.String,boolean,boolean,boolean,int,java.lang.String,int,boolean," +
	"int,long,java.lang.String,java.lang.String,int,long,boolean,long,long,long,double,long,boolean,java.lang.String," +
	"java.lang.String,boolean,java.lang.String,java.lang.String,long,long,boolean)"

// legacyField is one positional argument: its key in the pre-2.32 JSON shape, its Java type, and
// the key the 2.32+ JSON form uses for it when that differs.
type legacyField struct {
	key, javaType, modernKey string
}

// legacyFields lists the 57 arguments after addressMatch, in order.
var legacyFields = []legacyField{
	{"DLA", "String", "deadLetterAddress"}, {"expiryAddress", "String", ""}, {"expiryDelay", "long", ""},
	{"lastValueQueue", "boolean", "defaultLastValueQueue"}, {"maxDeliveryAttempts", "int", ""},
	{"maxSizeBytes", "long", ""}, {"pageSizeBytes", "int", ""}, {"pageCacheMaxSize", "int", ""},
	{"redeliveryDelay", "long", ""}, {"redeliveryMultiplier", "double", ""}, {"maxRedeliveryDelay", "long", ""},
	{"redistributionDelay", "long", ""}, {"sendToDLAOnNoRoute", "boolean", ""},
	{"addressFullMessagePolicy", "String", ""}, {"slowConsumerThreshold", "long", ""},
	{"slowConsumerCheckPeriod", "long", ""}, {"slowConsumerPolicy", "String", ""},
	{"autoCreateJmsQueues", "boolean", ""}, {"autoDeleteJmsQueues", "boolean", ""},
	{"autoCreateJmsTopics", "boolean", ""}, {"autoDeleteJmsTopics", "boolean", ""},
	{"autoCreateQueues", "boolean", ""}, {"autoDeleteQueues", "boolean", ""},
	{"autoCreateAddresses", "boolean", ""}, {"autoDeleteAddresses", "boolean", ""},
	{"configDeleteQueues", "String", ""}, {"configDeleteAddresses", "String", ""},
	{"maxSizeBytesRejectThreshold", "long", ""}, {"defaultLastValueKey", "String", ""},
	{"defaultNonDestructive", "boolean", ""}, {"defaultExclusiveQueue", "boolean", ""},
	{"defaultGroupRebalance", "boolean", ""}, {"defaultGroupBuckets", "int", ""},
	{"defaultGroupFirstKey", "String", ""}, {"defaultMaxConsumers", "int", ""},
	{"defaultPurgeOnNoConsumers", "boolean", ""}, {"defaultConsumersBeforeDispatch", "int", ""},
	{"defaultDelayBeforeDispatch", "long", ""}, {"defaultQueueRoutingType", "String", ""},
	{"defaultAddressRoutingType", "String", ""}, {"defaultConsumerWindowSize", "int", ""},
	{"defaultRingSize", "long", ""}, {"autoDeleteCreatedQueues", "boolean", ""},
	{"autoDeleteQueuesDelay", "long", ""}, {"autoDeleteQueuesMessageCount", "long", ""},
	{"autoDeleteAddressesDelay", "long", ""}, {"redeliveryCollisionAvoidanceFactor", "double", ""},
	{"retroactiveMessageCount", "long", ""}, {"autoCreateDeadLetterResources", "boolean", ""},
	{"deadLetterQueuePrefix", "String", ""}, {"deadLetterQueueSuffix", "String", ""},
	{"autoCreateExpiryResources", "boolean", ""}, {"expiryQueuePrefix", "String", ""},
	{"expiryQueueSuffix", "String", ""}, {"minExpiryDelay", "long", ""}, {"maxExpiryDelay", "long", ""},
	{"enableMetrics", "boolean", ""},
}

// legacyAddressSettingsArgs builds the positional arguments: the requested settings (2.32+ keys)
// over the current effective ones (pre-2.32 shape). A requested key the old form cannot express
// is an error rather than silently ignored.
func legacyAddressSettingsArgs(match string, current, requested map[string]any) ([]any, error) {
	known := map[string]bool{}
	for _, f := range legacyFields {
		known[f.key] = true
		if f.modernKey != "" {
			known[f.modernKey] = true
		}
	}
	var unsupported []string
	for k := range requested {
		if !known[k] {
			unsupported = append(unsupported, k)
		}
	}
	if len(unsupported) > 0 {
		return nil, fmt.Errorf("settings %s need Artemis 2.32 or later", strings.Join(unsupported, ", "))
	}
	args := make([]any, 0, len(legacyFields)+1)
	args = append(args, match)
	for _, f := range legacyFields {
		v, ok := requested[f.key]
		if !ok && f.modernKey != "" {
			v, ok = requested[f.modernKey]
		}
		if !ok {
			v, ok = current[f.key]
		}
		if !ok {
			return nil, fmt.Errorf("the broker did not report %q, which the old addAddressSettings form needs", f.key)
		}
		args = append(args, v)
	}
	return args, nil
}
