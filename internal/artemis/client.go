package artemis

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// Client talks to one broker. It is safe for concurrent use. New never dials: the first
// management call or Connect does, so a client can be built at plan time without side effects.
type Client struct {
	cfg   Config
	http  *http.Client
	names brokerNameCache
	// info is the last BrokerInfo read (see brokerInfoMaxAge).
	info brokerInfoCache
	// urlNodes is the last answer of ProbeNodes (see brokerInfoMaxAge).
	urlNodes urlNodesCache
	// queueMBeans are the MBean names of the queues this client called on (see onQueue).
	queueMBeans mbeanNames
	// snapshot holds what was read under a snapshot context (WithSnapshotReads).
	snapshot snapshotReads
	// requests counts the management (Jolokia) requests sent: each costs the broker CPU.
	requests atomic.Int64
	// busyBackoff is the first wait before a call refused as busy is retried; each next wait
	// doubles it. Zero is busyFirstWait; tests set a shorter one.
	busyBackoff time.Duration
	// session is the console session its requests carry, so that the broker logs the user in
	// once rather than for every request; logins counts the logins tried.
	session managementSession
	logins  atomic.Int64
}

// ManagementRequests is how many management requests this client has sent (a bulk request
// counts once), answered or not.
func (c *Client) ManagementRequests() int64 { return c.requests.Load() }

// ManagementLogins is how many console logins this client has tried (ensureSession).
func (c *Client) ManagementLogins() int64 { return c.logins.Load() }

// New validates cfg and returns a client for it.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("broker %q: %w", cfg.Name, err)
	}
	return &Client{cfg: cfg, http: newHTTPClient(cfg)}, nil
}

// Name is the operator's name for the broker, as used in errors.
func (c *Client) Name() string { return c.cfg.Name }
