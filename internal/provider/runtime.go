package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// planSnapshotMaxAge bounds the age of the read of a broker's queues that a plan's checks and
// queue data sources share (artemis.WithSnapshotReads): a plan of hundreds of transfers reads
// each broker's queues in one request instead of two per queue, and what it shows of a queue
// is at most this old. Apply's own reads are always fresh.
const planSnapshotMaxAge = 30 * time.Second

// secretFieldKeys are log field names whose values are always masked.
var secretFieldKeys = []string{"password", "client_key_pem", "ledger_dsn", "dsn"}

// providerRuntime is what the configured provider hands to resources and data sources: the
// brokers' configurations and their clients (built on first use), the transfer ledger (connected on
// first use, migrated before its first write: writableLedger), the duplicate probes and passed
// checks shared by the transfers of one plan or apply, the explanations shown so far, test hooks, and the secrets masked in logs.
// It is safe for concurrent use.
type providerRuntime struct {
	configs       map[string]artemis.Config // fully known, validated brokers
	pending       map[string]bool           // brokers with values not known until apply
	allUnknown    bool                      // the brokers map itself was not known
	ledgerDSN     string
	ledgerUnknown bool
	// planSendsCanaries makes the plan prove, with canaries, what only writes can prove;
	// without it the plan only reads and apply makes those proofs before anything moves.
	planSendsCanaries bool
	secrets           []string // passwords, keys and DSNs, masked in logs
	runHooks          runHooks // tests only (hooksFor)
	// queueDeleteHooks, tests only, stop an artemis_queue's delete at a point of its checks.
	queueDeleteHooks artemis.DeleteEmptyQueueHooks
	// probes shares the target's duplicate-detection canary between the transfers of this
	// configured provider (one plan, or one apply): one canary per target broker, not one per
	// transfer and check, each of which leaves a warning in the broker's log.
	probes transfer.DuplicateProbes
	// stagingProbes shares a move's staging canary on its source broker likewise: one per source
	// broker, not one per move, each 17 management requests and six journal writes.
	stagingProbes transfer.StagingProbes
	// checks lets a run that Create or Update starts right after the apply's own plan of the
	// same transfer (ModifyPlan's preflight, moments before, in this configured provider) skip
	// checking the brokers again.
	checks transfer.PassedChecks
	// explained holds the explanation warnings (preflight.Finding.Explanation) this
	// configured provider has shown, by summary and detail: a plan of sixty transfers explains
	// each once, not sixty times.
	explained sync.Map
	// planned holds the queues this plan creates (queueResource.ModifyPlan): a transfer into one is
	// checked at apply, once it exists.
	planned plannedQueues

	mu      sync.Mutex
	clients map[string]*artemis.Client

	// The transfer ledger of ledgerDSN, opened on first use (connectedLedger), and who
	// creates runs from this process.
	ledgerMu sync.Mutex
	ledger   *ledger.Ledger
	// ledgerMigrated is set once this process migrated the ledger's schema (writableLedger).
	ledgerMigrated bool
	creator        ledger.Creator
}

// Client returns the client of the broker configured under name, building it on first use.
// Building never dials. The error names the broker and lists the configured names.
func (rt *providerRuntime) Client(name string) (*artemis.Client, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if c, ok := rt.clients[name]; ok {
		return c, nil
	}
	cfg, ok := rt.configs[name]
	switch {
	case ok:
	case rt.pending[name]:
		return nil, fmt.Errorf("the configuration of broker %q depends on values known only after apply; retry once they are known", name)
	case rt.allUnknown:
		return nil, fmt.Errorf("broker %q: the provider's brokers depend on values known only after apply", name)
	default:
		names := rt.Names()
		if len(names) == 0 {
			return nil, fmt.Errorf("no broker named %q: the provider has no brokers configured", name)
		}
		return nil, fmt.Errorf("no broker named %q in the provider's brokers; configured brokers: %s", name, strings.Join(names, ", "))
	}
	c, err := artemis.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the client of broker %q: %w", name, err)
	}
	if rt.clients == nil {
		rt.clients = map[string]*artemis.Client{}
	}
	rt.clients[name] = c
	return c, nil
}

// Names returns the names of the configured brokers, sorted, including those whose
// configuration is not known yet.
func (rt *providerRuntime) Names() []string {
	names := make([]string, 0, len(rt.configs)+len(rt.pending))
	for n := range rt.configs {
		names = append(names, n)
	}
	for n := range rt.pending {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LedgerDSN returns the PostgreSQL connection string of the ledger, or "" when none is set.
func (rt *providerRuntime) LedgerDSN() string { return rt.ledgerDSN }

// Unknown reports whether some provider configuration was not known at plan time. Plan-time
// checks that need a broker should then be skipped; a warning has already said so.
func (rt *providerRuntime) Unknown() bool {
	return rt.allUnknown || rt.ledgerUnknown || len(rt.pending) > 0
}

// MaskSecrets returns ctx with the configured passwords, keys and DSNs masked in every log
// message and field. Resources and data sources call it first thing in each operation.
func (rt *providerRuntime) MaskSecrets(ctx context.Context) context.Context {
	ctx = tflog.MaskFieldValuesWithFieldKeys(ctx, secretFieldKeys...)
	if len(rt.secrets) > 0 {
		ctx = tflog.MaskLogStrings(ctx, rt.secrets...)
	}
	return ctx
}

// runtimeFromProviderData returns the providerRuntime a resource or data source receives in its
// Configure request. It returns nil without a diagnostic while the provider is not configured
// yet (Terraform configures resources and data sources before the provider during validation).
func runtimeFromProviderData(data any, diags *diag.Diagnostics) *providerRuntime {
	if data == nil {
		return nil
	}
	set, ok := data.(*providerRuntime)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *provider.providerRuntime, got %T. This is a bug in the provider; please report it.", data))
		return nil
	}
	return set
}

// explainedOnceNote ends the detail of an explanation warning, which a plan shows once.
const explainedOnceNote = " (Explained once in this plan, for every transfer it applies to.)"

// unexplained leaves out of findings the explanations this configured provider has shown
// already, and notes on the first showing of each that it stands for every transfer. Other
// findings pass unchanged: what is found on the brokers is shown for each transfer.
func (rt *providerRuntime) unexplained(findings []preflight.Finding) []preflight.Finding {
	if rt == nil {
		return findings
	}
	out := make([]preflight.Finding, 0, len(findings))
	for _, f := range findings {
		if !f.Explanation {
			out = append(out, f)
			continue
		}
		if _, shown := rt.explained.LoadOrStore(f.Summary+"\x00"+f.Detail, true); shown {
			continue
		}
		f.Detail += explainedOnceNote
		out = append(out, f)
	}
	return out
}

// brokerClient returns the client of a named broker, or adds an error on attr and returns nil.
func brokerClient(rt *providerRuntime, name string, attr path.Path, diags *diag.Diagnostics) *artemis.Client {
	if rt == nil {
		diags.AddAttributeError(attr, "Provider not configured",
			"The artemis provider has no configuration yet; add a provider \"artemis\" block with brokers.")
		return nil
	}
	client, err := rt.Client(name)
	if err != nil {
		diags.AddAttributeError(attr, "Unknown broker ("+attr.String()+")", fmt.Sprintf("%s. Set %s to one of the keys of the provider's brokers.", err, attr))
		return nil
	}
	return client
}

// namedBrokerClient starts a data source's read of the broker its attribute broker names: ctx
// with the provider's secrets masked in logs, and that broker's client, or nil with an attribute
// error when the provider is not configured or has no such broker.
func namedBrokerClient(ctx context.Context, rt *providerRuntime, broker types.String, diags *diag.Diagnostics) (context.Context, *artemis.Client) {
	if rt != nil {
		ctx = rt.MaskSecrets(ctx)
	}
	return ctx, brokerClient(rt, broker.ValueString(), path.Root("broker"), diags)
}
