package preflight

import (
	"strings"
)

// brokersConnect refuses a transfer to or from a broker the relay cannot connect to over AMQP.
func brokersConnect(f Facts) []Finding {
	var out []Finding
	for _, p := range f.ConnectionProblems {
		out = append(out, refuse(p.Attribute, summaryConnection,
			"The transfer could not open an AMQP connection to broker %q: %s. Nothing was moved. Check the broker's "+
				"amqp_urls, its credentials and its tls settings in the provider configuration, then plan again.",
			p.Broker, detailOrNone(p.Detail)))
	}
	return out
}

// writeChecksSkipped warns, once on target.broker, that a plan that only read the brokers left
// the proofs that need writes to apply. It is an explanation: the transfers of one plan between
// the same brokers share it.
func writeChecksSkipped(f Facts) []Finding {
	if len(f.SkippedWriteChecks) == 0 {
		return nil
	}
	return []Finding{explain(warn("target.broker", summaryWriteChecksSkipped,
		"This plan only read the brokers, so it did not prove %s. Apply proves them before it moves anything, and "+
			"refuses the transfer, with nothing moved, if one fails. To prove them at plan, as a user that may write, "+
			"set plan_sends_canaries = true in the provider block (or ARTEMIS_PLAN_SENDS_CANARIES=true).",
		strings.Join(f.SkippedWriteChecks, ", nor ")))}
}

// permissionsGranted refuses each operation the probes found denied.
func permissionsGranted(f Facts) []Finding {
	var out []Finding
	for _, p := range f.PermissionProblems {
		out = append(out, refuse(p.Attribute, summaryPermission,
			"The user configured for broker %q may not %s: %s. Grant it to the user's role (etc/management.xml for "+
				"a management operation, the security settings for messaging; the Broker permissions guide lists "+
				"each), or configure a user that has it, and plan again.",
			p.Broker, p.What, detailOrNone(p.Detail)))
	}
	return out
}
