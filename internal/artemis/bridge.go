package artemis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A Core bridge is a broker's own consumer of one of its queues that forwards each message to
// another broker over a connector (a named Core URL), and acknowledges it once the other broker
// confirmed it. This file creates, reads and removes connectors and bridges through the
// broker's management.

// BridgeDefinition is a Core bridge to create on a broker. Only the fields below are sent; the
// broker gives every other setting of a bridge its own default.
type BridgeDefinition struct {
	// Name is the bridge's name, unique on its broker.
	Name string
	// Queue is the queue on this broker the bridge consumes.
	Queue string
	// ForwardingAddress is where the other broker routes each message: an address, or a
	// queue's fully qualified name (FQQN) to reach one queue. Empty: each message's own address.
	ForwardingAddress string
	// Connectors are the names of connectors of this broker (AddConnector) that reach the
	// other broker, tried in turn.
	Connectors []string
	// User and Password log the bridge in on the other broker; empty: the broker's cluster
	// user. Management never reads the password back.
	User, Password string
	// DuplicateDetection makes the bridge send without waiting for each message and give each
	// one a bridge duplicate id of its own (the source node and message id), by which the other
	// broker drops a message the bridge sends again after a reconnection.
	DuplicateDetection bool
	// ConfirmationWindowSize is how many bytes the bridge sends before the other broker must
	// confirm them; zero: the broker's default, 1 MiB.
	ConfirmationWindowSize int
	// ReconnectAttempts is how often the bridge reconnects after losing the other broker, and
	// is written as it is: -1 without end, 0 never.
	ReconnectAttempts int
	// RetryInterval is the wait between connection attempts; zero: the broker's default, 2 s.
	RetryInterval time.Duration
	// RoutingType is what the bridge does with each message's routing type: PASS (keep it),
	// STRIP (remove it), ANYCAST or MULTICAST (set it). Empty: the broker's default, PASS.
	RoutingType string
	// Filter forwards only the messages it matches; empty: every message.
	Filter string
}

// bridgeConfiguration is the JSON createBridge(String) takes. Its keys are the same on 2.18,
// 2.31 and 2.40, and the broker ignores a key it does not know.
func (d BridgeDefinition) bridgeConfiguration() (string, error) {
	conf := map[string]any{
		"name":                    d.Name,
		"queue-name":              d.Queue,
		"static-connectors":       d.Connectors,
		"use-duplicate-detection": d.DuplicateDetection,
		"reconnect-attempts":      d.ReconnectAttempts,
	}
	set := func(key string, value any, ok bool) {
		if ok {
			conf[key] = value
		}
	}
	set("forwarding-address", d.ForwardingAddress, d.ForwardingAddress != "")
	set("user", d.User, d.User != "")
	set("password", d.Password, d.Password != "")
	set("confirmation-window-size", d.ConfirmationWindowSize, d.ConfirmationWindowSize != 0)
	set("retry-interval", d.RetryInterval.Milliseconds(), d.RetryInterval > 0)
	set("routing-type", strings.ToUpper(d.RoutingType), d.RoutingType != "")
	set("filter-string", d.Filter, d.Filter != "")
	raw, err := json.Marshal(conf)
	return string(raw), err
}

// BridgeState is a bridge as its broker's management shows it.
type BridgeState struct {
	Name              string
	Queue             string
	ForwardingAddress string
	Connectors        []string
	// Started: the bridge consumes its queue (it may still be connecting to the other broker).
	Started            bool
	DuplicateDetection bool
	ReconnectAttempts  int
	// Forwarded is how many sends the bridge made to the other broker, the attribute
	// MessagesPendingAcknowledgement: despite its name the broker only ever adds to it, one for
	// each send, a send again after a reconnection included (2.31 and 2.40 alike). So it is no
	// count of what awaits confirmation, and Forwarded minus Acknowledged stays above zero once
	// the bridge has reconnected; what is left to forward is what the bridge's queue holds.
	Forwarded int64
	// Acknowledged is how many messages the other broker confirmed (MessagesAcknowledged),
	// each once. Both counts start at zero with the bridge, and again when its broker restarts.
	Acknowledged int64
}

func bridgeMBean(broker, name string) string {
	return brokerMBean(broker) + ",component=bridges,name=" + quoteObjectNameValue(name)
}

// connectorsSupported refuses, before any call, a broker too old to add or remove connectors.
func (c *Client) connectorsSupported(ctx context.Context, what string) error {
	info, err := c.BrokerInfo(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !ManagedConnectors(info.Version) {
		return fmt.Errorf("broker %q: %s: Artemis %s has no addConnector or removeConnector (2.25.0 and later have): "+
			"declare the connector in the broker's broker.xml instead: %w", c.cfg.Name, what, info.Version, ErrUnsupported)
	}
	return nil
}

// AddConnector adds a connector, a named Core URL that bridges use to reach another broker. The
// broker stores it, so it outlives a restart; a connector of the same name is replaced. It
// needs Artemis 2.25.0 or later (ErrUnsupported before).
func (c *Client) AddConnector(ctx context.Context, name, url string) error {
	what := fmt.Sprintf("adding connector %q", name)
	if err := c.connectorsSupported(ctx, what); err != nil {
		return err
	}
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "addConnector", name, url); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// RemoveConnector removes a connector. A connector that does not exist is no error: the broker
// answers alike. It needs Artemis 2.25.0 or later (ErrUnsupported before).
func (c *Client) RemoveConnector(ctx context.Context, name string) error {
	what := fmt.Sprintf("removing connector %q", name)
	if err := c.connectorsSupported(ctx, what); err != nil {
		return err
	}
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "removeConnector", name); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// ConnectorNames lists the broker's connectors, those of its configuration and those added
// through management.
func (c *Client) ConnectorNames(ctx context.Context) ([]string, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return nil, err
	}
	v, err := c.read(ctx, brokerMBean(broker), "ConnectorsAsJSON")
	if err != nil {
		return nil, fmt.Errorf("listing connectors: %w", err)
	}
	var text string
	d := attrDecoder{values: v}
	d.str("ConnectorsAsJSON", &text)
	var rows []struct {
		Name string `json:"name"`
	}
	if d.err == nil && text != "" {
		d.err = json.Unmarshal([]byte(text), &rows)
	}
	if d.err != nil {
		return nil, fmt.Errorf("broker %q: decoding the connector list: %w", c.cfg.Name, d.err)
	}
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, r.Name)
	}
	return names, nil
}

// BridgeNames lists the broker's bridges. A bridge of concurrency n is listed as n bridges,
// name-0 to name-(n-1).
func (c *Client) BridgeNames(ctx context.Context) ([]string, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return nil, err
	}
	v, err := c.read(ctx, brokerMBean(broker), "BridgeNames")
	if err != nil {
		return nil, fmt.Errorf("listing bridges: %w", err)
	}
	var names []string
	d := attrDecoder{values: v}
	d.decode("BridgeNames", &names)
	if d.err != nil {
		return nil, fmt.Errorf("broker %q: decoding the bridge list: %w", c.cfg.Name, d.err)
	}
	return names, nil
}

// CreateBridge creates a bridge and starts it. Since Artemis 2.28 the broker stores it and
// deploys it again after a restart (PersistsManagedBridges). The broker answers createBridge alike whether it
// deployed the bridge or not (a name taken, a queue or connector missing: it only logs why), so
// the bridge is looked for before and after: a name taken gives ErrBridgeExists, a bridge
// missing afterwards ErrBridgeNotDeployed.
func (c *Client) CreateBridge(ctx context.Context, def BridgeDefinition) error {
	what := fmt.Sprintf("creating bridge %q from queue %q", def.Name, def.Queue)
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	before, err := c.BridgeNames(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if slices.Contains(before, def.Name) {
		return fmt.Errorf("broker %q: %s: a bridge of that name exists already, and was left as it is: %w", c.cfg.Name, what, ErrBridgeExists)
	}
	conf, err := def.bridgeConfiguration()
	if err != nil {
		return fmt.Errorf("encoding bridge %q: %w", def.Name, err)
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "createBridge(java.lang.String)", conf); err != nil {
		// The broker may quote the configuration it refused, password and all.
		return redactSecret(fmt.Errorf("%s: %w", what, err), def.Password)
	}
	after, err := c.BridgeNames(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !slices.Contains(after, def.Name) {
		return fmt.Errorf("broker %q: %s: the broker deployed no bridge; its log says why (queue %q or connectors %s missing, "+
			"or a bridge of that name created meanwhile): %w", c.cfg.Name, what, def.Queue, strings.Join(def.Connectors, ", "), ErrBridgeNotDeployed)
	}
	return nil
}

// DestroyBridge stops and removes a bridge, and the broker's stored copy of it. Messages it
// sent and the other broker has not confirmed stay in its queue. A bridge that does not exist
// is no error: the broker answers alike.
func (c *Client) DestroyBridge(ctx context.Context, name string) error {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "destroyBridge", name); err != nil {
		return fmt.Errorf("destroying bridge %q: %w", name, err)
	}
	return nil
}

// Bridge reads a bridge's state and counters in one request. A bridge that does not exist
// gives an error that wraps ErrNotFound.
func (c *Client) Bridge(ctx context.Context, name string) (BridgeState, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return BridgeState{}, err
	}
	v, err := c.read(ctx, bridgeMBean(broker, name), "Name", "QueueName", "ForwardingAddress", "StaticConnectors", "Started",
		"UseDuplicateDetection", "ReconnectAttempts", "MessagesAcknowledged", "MessagesPendingAcknowledgement")
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return BridgeState{}, fmt.Errorf("reading bridge %q: it does not exist: %w", name, err)
		}
		return BridgeState{}, fmt.Errorf("reading bridge %q: %w", name, err)
	}
	var s BridgeState
	d := attrDecoder{values: v}
	d.str("Name", &s.Name)
	d.str("QueueName", &s.Queue)
	d.str("ForwardingAddress", &s.ForwardingAddress)
	d.decode("StaticConnectors", &s.Connectors)
	d.boolean("Started", &s.Started)
	d.boolean("UseDuplicateDetection", &s.DuplicateDetection)
	d.integer("ReconnectAttempts", &s.ReconnectAttempts)
	d.int64("MessagesAcknowledged", &s.Acknowledged)
	d.int64("MessagesPendingAcknowledgement", &s.Forwarded)
	if d.err != nil {
		return BridgeState{}, fmt.Errorf("broker %q: reading bridge %q: %w", c.cfg.Name, name, d.err)
	}
	return s, nil
}
