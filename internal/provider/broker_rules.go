package provider

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/provider/validators"
)

// The checks of one broker's settings that need nothing but the configuration itself, and their
// refusals. The schema runs them at terraform validate (validators.Rule, validators.OneOfPair)
// and resolveBroker again at configure, on values that were unknown at validate and on
// ARTEMIS_BROKERS, so both refuse in the same words.

// brokerNamePattern keeps broker names usable in messages, resource ids and variable names.
var brokerNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// brokerKeyRule refuses a key of brokers that transfers and data sources could not name.
func brokerKeyRule(name string) *validators.Refusal {
	if brokerNamePattern.MatchString(name) {
		return nil
	}
	return &validators.Refusal{Summary: "Invalid broker name",
		Detail: fmt.Sprintf("The broker name %q must start with a letter or digit and hold only letters, digits, '_', '-' and '.'. Rename the key in brokers.", name)}
}

// managementURL is management_url as the client uses it: without surrounding spaces or a
// trailing slash.
func managementURL(raw string) string { return strings.TrimRight(strings.TrimSpace(raw), "/") }

// managementURLRule refuses a management_url that is not an http:// or https:// URL with a host.
func managementURLRule(raw string) *validators.Refusal {
	u := managementURL(raw)
	if u == "" {
		return &validators.Refusal{Summary: "Missing management URL",
			Detail: fmt.Sprintf("not set. Set it to the broker's Jolokia endpoint, for example %q.", exampleManagementURL)}
	}
	if msg := checkEndpoint(u, "http", "https"); msg != "" {
		return &validators.Refusal{Summary: "Invalid management URL",
			Detail: fmt.Sprintf("%s. Use the broker's Jolokia endpoint, for example %q.", msg, exampleManagementURL)}
	}
	return nil
}

// amqpURLRule refuses an element of amqp_urls that is not an amqp:// or amqps:// URL with a host.
func amqpURLRule(raw string) *validators.Refusal {
	if msg := checkEndpoint(strings.TrimSpace(raw), "amqp", "amqps"); msg != "" {
		return &validators.Refusal{Summary: "Invalid AMQP URL",
			Detail: fmt.Sprintf("%s. Use the broker's AMQP acceptor, for example \"amqp://127.0.0.1:5672\", or amqps:// with a tls block for TLS.", msg)}
	}
	return nil
}

// managementOriginRule refuses a management_origin that is set but not an http:// or https://
// URL with a host.
func managementOriginRule(raw string) *validators.Refusal {
	origin := strings.TrimSpace(raw)
	if origin == "" {
		return nil // derived from management_url
	}
	if msg := checkEndpoint(origin, "http", "https"); msg != "" {
		return &validators.Refusal{Summary: "Invalid management origin",
			Detail: fmt.Sprintf("%s. Give the scheme and host the broker's Jolokia accepts as Origin, for example \"http://127.0.0.1\", or leave it unset to derive it from management_url.", msg)}
	}
	return nil
}

// timeoutRule refuses a connect_timeout or request_timeout that is not a positive Go duration;
// "" is the default.
func timeoutRule(raw string) *validators.Refusal {
	_, r := parseTimeout(raw)
	return r
}

// parseTimeout is the duration raw gives, 0 for "" (the default), or why it gives none.
func parseTimeout(raw string) (time.Duration, *validators.Refusal) {
	if raw == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(raw)
	switch {
	case err != nil:
		return 0, &validators.Refusal{Summary: "Invalid duration",
			Detail: fmt.Sprintf("%q is not a duration. Use a Go duration such as \"10s\", \"2m\" or \"1m30s\".", raw)}
	case d <= 0:
		return 0, &validators.Refusal{Summary: "Invalid duration",
			Detail: fmt.Sprintf("must be positive, got %q. Leave it unset for the default.", raw)}
	}
	return d, nil
}

// tlsConflict is the refusal of a tls block that gives the PEM text of what (as "CA
// certificate") both inline, in pemAttr, and as a file, in fileAttr.
func tlsConflict(what, pemAttr, fileAttr string) validators.Refusal {
	return validators.Refusal{Summary: "Conflicting TLS settings",
		Detail: fmt.Sprintf("both tls.%s and tls.%s are set. Set only one: %s holds the PEM text of the %s, %s a path to a file holding it.", pemAttr, fileAttr, pemAttr, what, fileAttr)}
}
