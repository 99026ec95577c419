package provider

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/provider/validators"
)

var _ provider.Provider = &artemisProvider{}

// New returns a constructor of the provider; version is "dev" for local builds, "test" in tests,
// and the release version when built by goreleaser.
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &artemisProvider{version: version}
	}
}

// artemisProvider is the provider. It keeps nothing between calls: Configure hands a
// providerRuntime to resources and data sources.
type artemisProvider struct {
	version string
	// runHooks, for acceptance tests only, reaches every transfer engine (hooksFor).
	runHooks runHooks
	// queueDeleteHooks, for acceptance tests only, reach every artemis_queue's delete.
	queueDeleteHooks artemis.DeleteEmptyQueueHooks
	// canaryProbed, for acceptance tests only, hears of every duplicate-detection canary a
	// configured provider sends, with the runtime that sent it.
	canaryProbed func(rt *providerRuntime, broker, canary string)
}

// providerModel is the provider block.
type providerModel struct {
	Brokers           types.Map    `tfsdk:"brokers"`
	LedgerDSN         types.String `tfsdk:"ledger_dsn"`
	PlanSendsCanaries types.Bool   `tfsdk:"plan_sends_canaries"`
}

// brokerModel is one entry of brokers.
type brokerModel struct {
	AMQPURLs         types.List   `tfsdk:"amqp_urls"`
	ManagementURL    types.String `tfsdk:"management_url"`
	ManagementOrigin types.String `tfsdk:"management_origin"`
	Username         types.String `tfsdk:"username"`
	Password         types.String `tfsdk:"password"`
	BrokerName       types.String `tfsdk:"broker_name"`
	TLS              types.Object `tfsdk:"tls"`
	ConnectTimeout   types.String `tfsdk:"connect_timeout"`
	RequestTimeout   types.String `tfsdk:"request_timeout"`
}

// tlsModel is the tls block of one broker.
type tlsModel struct {
	CACertPEM          types.String `tfsdk:"ca_cert_pem"`
	CACertFile         types.String `tfsdk:"ca_cert_file"`
	ClientCertPEM      types.String `tfsdk:"client_cert_pem"`
	ClientCertFile     types.String `tfsdk:"client_cert_file"`
	ClientKeyPEM       types.String `tfsdk:"client_key_pem"`
	ClientKeyFile      types.String `tfsdk:"client_key_file"`
	ServerName         types.String `tfsdk:"server_name"`
	InsecureSkipVerify types.Bool   `tfsdk:"insecure_skip_verify"`
}

func (p *artemisProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "artemis"
	resp.Version = p.version
}

func (p *artemisProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Moves and copies messages between Apache ActiveMQ Artemis brokers. " +
			"One provider block names every broker a configuration uses, so that a transfer can read from one and write to another.",
		Attributes: map[string]schema.Attribute{
			"brokers": schema.MapNestedAttribute{
				MarkdownDescription: "The brokers, keyed by a broker key of your choice that resources and data sources use to refer to them " +
					"(letters, digits, `_`, `-` and `.`). When not set, the provider reads `" + envBrokers + "`, a JSON object of the same shape. " +
					"The provider never contacts a broker while configuring; it connects when a resource or data source needs it. " +
					"`terraform validate` refuses a broker key, URL or timeout that cannot work, and a `tls` block that gives a PEM value both inline and as a file; " +
					"a value known only later, and `" + envBrokers + "`, " +
					"are checked in the same words when the provider is configured.",
				Optional: true,
				Validators: []validator.Map{mapvalidator.KeysAre(validators.Rule(
					"a broker key starts with a letter or digit and holds only letters, digits, '_', '-' and '.'", brokerKeyRule))},
				NestedObject: schema.NestedAttributeObject{
					Attributes: brokerSchemaAttributes(),
				},
			},
			"ledger_dsn": schema.StringAttribute{
				MarkdownDescription: "PostgreSQL connection string of the transfer ledger, as `postgres://user:password@host:5432/db?sslmode=verify-full`. " +
					"When set, every move and every copy is recorded there before anything moves (who started it, what, when, its counters and events, how it ended; " +
					"read them with `artemis_transfer_runs`; a copy also records each message it copied), and a lease fences each run to one apply at a time. " +
					"`terraform plan` only reads the ledger (an unreachable one fails the plan); the first `terraform apply` that records a run creates " +
					"or migrates the ledger's schema (`artemis_transfer`), and the plan says when it will. " +
					"See the ledger guide. Defaults to `" + envLedgerDSN + "`; unset, moves are not recorded and `terraform plan` refuses a copy, which needs the ledger. " +
					"Unless the server is on this machine, set `sslmode=verify-full` (or `verify-ca`): without it the plan warns, since the credentials and every record would cross the network in clear or over TLS that is not verified.",
				Optional:  true,
				Sensitive: true,
			},
			"plan_sends_canaries": schema.BoolAttribute{
				MarkdownDescription: "Make `terraform plan` prove, by writing, what only a write can prove: it creates and removes canary staging queues on the source " +
					"(that the user may run a staging queue), attaches a sender to the target queue, and sends one canary message twice to the target " +
					"(that the target discards a repeated duplicate id; the broker logs an `AMQ222059` duplicate warning for it). " +
					"Without it (the default) the plan only reads the brokers and the ledger, refuses what it can tell from what it reads, and warns " +
					"once on `target.broker` that apply will make these proofs; apply always makes them, before anything moves, and refuses the " +
					"transfer if one fails. Set it for an operator's plan whose broker users may write, to see every refusal at plan. " +
					"Defaults to `" + envPlanSendsCanaries + "` (`true` or `false`), else `false`.",
				Optional: true,
			},
		},
	}
}

func brokerSchemaAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"amqp_urls": schema.ListAttribute{
			MarkdownDescription: "AMQP 1.0 endpoints of the broker, `amqp://host:port` or `amqps://host:port`, tried in order. Needed by transfers; " +
				"data sources that only read management facts work without it. Every URL must reach the node that `management_url` reaches, or a " +
				"backup that shares its journal (a primary/backup pair, shared store or replication): other nodes of a cluster have neither a run's " +
				"staging queue nor the target's duplicate-id cache. A transfer checks each connection's node id, skips URLs that reach another node " +
				"(the plan warns of them, and refuses when none reaches the management node), and waits for the run's node rather than fail over " +
				"to another one. Credentials in a URL (`amqp://user:password@host:port`) are used when " +
				"`username` is not set, and never shown in errors or logs; prefer `username` and `password` (a sensitive attribute).",
			ElementType: types.StringType,
			Optional:    true,
			Validators: []validator.List{listvalidator.ValueStringsAre(validators.Rule(
				"each an amqp:// or amqps:// URL with a host", amqpURLRule))},
		},
		"management_url": schema.StringAttribute{
			MarkdownDescription: "Jolokia endpoint of the broker's management API, for example `" + exampleManagementURL + "`. " +
				"Credentials in the URL are used when `username` is not set, and never shown in errors or logs; prefer `username` and `password`.",
			Required:   true,
			Validators: []validator.String{validators.Rule("an http:// or https:// URL with a host", managementURLRule)},
		},
		"management_origin": schema.StringAttribute{
			MarkdownDescription: "`Origin` header sent with Jolokia requests. Brokers made by `artemis create` only accept an origin matching their HTTP host. " +
				"Defaults to the scheme and host of `management_url`.",
			Optional:   true,
			Validators: []validator.String{validators.Rule("an http:// or https:// URL with a host", managementOriginRule)},
		},
		"username": schema.StringAttribute{
			MarkdownDescription: "User for AMQP and management. Defaults to `ARTEMIS_<NAME>_USERNAME`, where `<NAME>` is the broker's key in `brokers` upper-cased with every character other than a letter or digit replaced by `_`.",
			Optional:            true,
		},
		"password": schema.StringAttribute{
			MarkdownDescription: "Password of `username`. Defaults to `ARTEMIS_<NAME>_PASSWORD`. Required when a username is set.",
			Optional:            true,
			Sensitive:           true,
		},
		"broker_name": schema.StringAttribute{
			MarkdownDescription: "The broker's own name (`<name>` in its broker.xml), which its management (JMX) object names carry as " +
				"`broker=\"...\"`; not the key of this entry in `brokers`. Discovered on first use when not set; `artemis_broker` reads it as `broker_name`.",
			Optional: true,
		},
		"connect_timeout": schema.StringAttribute{
			MarkdownDescription: "Bound on dialing the broker, as a Go duration such as `10s`. " +
				fmt.Sprintf("Defaults to `%ds`.", int(artemis.DefaultConnectTimeout.Seconds())),
			Optional:   true,
			Validators: []validator.String{validators.Rule("a positive Go duration", timeoutRule)},
		},
		"request_timeout": schema.StringAttribute{
			MarkdownDescription: "Bound on one management request, as a Go duration such as `60s`. " +
				fmt.Sprintf("Defaults to `%ds`, ", int(artemis.DefaultRequestTimeout.Seconds())) + "the broker's own limit for waiting on its management lock.",
			Optional:   true,
			Validators: []validator.String{validators.Rule("a positive Go duration", timeoutRule)},
		},
		"tls": schema.SingleNestedAttribute{
			MarkdownDescription: "TLS for `amqps://` and `https://` endpoints. Without it, the system's trusted roots are used and certificates are verified. " +
				"Each PEM value can be given inline (`*_pem`) or as a file path (`*_file`), not both.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"ca_cert_pem": schema.StringAttribute{
					MarkdownDescription: "PEM text of the CA certificate(s) that signed the broker's certificate.",
					Optional:            true,
				},
				"ca_cert_file": schema.StringAttribute{
					MarkdownDescription: "Path of a PEM file holding the CA certificate(s).",
					Optional:            true,
					Validators:          []validator.String{validators.OneOfPair("ca_cert_pem", tlsConflict("CA certificate", "ca_cert_pem", "ca_cert_file"))},
				},
				"client_cert_pem": schema.StringAttribute{
					MarkdownDescription: "PEM text of the client certificate, for brokers that require mutual TLS.",
					Optional:            true,
				},
				"client_cert_file": schema.StringAttribute{
					MarkdownDescription: "Path of a PEM file holding the client certificate.",
					Optional:            true,
					Validators:          []validator.String{validators.OneOfPair("client_cert_pem", tlsConflict("client certificate", "client_cert_pem", "client_cert_file"))},
				},
				"client_key_pem": schema.StringAttribute{
					MarkdownDescription: "PEM text of the client certificate's unencrypted private key.",
					Optional:            true,
					Sensitive:           true,
				},
				"client_key_file": schema.StringAttribute{
					MarkdownDescription: "Path of a PEM file holding the client certificate's unencrypted private key.",
					Optional:            true,
					Validators:          []validator.String{validators.OneOfPair("client_key_pem", tlsConflict("client private key", "client_key_pem", "client_key_file"))},
				},
				"server_name": schema.StringAttribute{
					MarkdownDescription: "Host name expected in the broker's certificate, when it differs from the host in the URLs.",
					Optional:            true,
				},
				"insecure_skip_verify": schema.BoolAttribute{
					MarkdownDescription: "Accept any broker certificate. For tests only: a man in the middle can then pose as the broker and see the credentials and every message moved, " +
						"so `terraform plan` warns while it is set. Set `ca_cert_file` or `ca_cert_pem` instead. Defaults to `false`.",
					Optional: true,
				},
			},
		},
	}
}

// Configure reads the provider block, applies the environment fallbacks and validates the
// result. It never contacts a broker, and it only reads the ledger (ledger_dsn): it connects and
// reads the schema's version, so that an unreachable ledger, or one migrated by a newer
// provider, fails the plan. The schema is created or migrated by the first apply that writes
// to the ledger, never here: a plan writes nothing.
func (p *artemisProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	ctx = tflog.MaskFieldValuesWithFieldKeys(ctx, secretFieldKeys...)

	var model providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	if resp.Diagnostics.HasError() {
		return
	}
	settings, diags := settingsFromModel(ctx, model)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !model.Brokers.IsNull() && os.Getenv(envBrokers) != "" {
		tflog.Info(ctx, envBrokers+" is ignored because brokers is set in the provider block")
	}

	rt, diags := resolveSettings(settings, os.Getenv, os.ReadFile)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx = rt.MaskSecrets(ctx)
	tflog.Debug(ctx, "provider configured", map[string]any{
		"brokers":             rt.Names(),
		"unknown_config":      rt.Unknown(),
		"ledger":              rt.LedgerDSN() != "",
		"plan_sends_canaries": rt.planSendsCanaries,
	})

	rt.runHooks = p.runHooks
	rt.queueDeleteHooks = p.queueDeleteHooks
	if rt.queueDeleteHooks.BeforeStop == nil && rt.queueDeleteHooks.BeforeCheck == nil {
		rt.queueDeleteHooks = faultQueueDeleteHooks() // none unless built with -tags faultpoints
	}
	if rt.runHooks == nil {
		rt.runHooks = faultPointHooks() // nil unless built with -tags faultpoints
	}
	if p.canaryProbed != nil {
		rt.probes.Probed = func(broker, canary string) { p.canaryProbed(rt, broker, canary) }
	}
	rt.creator = runCreator(os.Getenv, os.ReadFile)
	if rt.LedgerDSN() != "" {
		// At plan as at apply: a ledger that cannot be reached, or that a newer provider
		// migrated, is reported here, on ledger_dsn, before any transfer is planned without
		// its bookkeeping. Only reads: apply migrates the schema before its first write.
		if _, err := rt.ledgerSchema(ctx); err != nil {
			advice := "check that the server is up and the DSN's host, port, user and database, or unset ledger_dsn to move without a ledger."
			if errors.Is(err, ledger.ErrSchemaTooNew) {
				advice = "use the provider version that migrated it, or a newer one."
			}
			resp.Diagnostics.AddAttributeError(path.Root("ledger_dsn"), "Cannot use the transfer ledger",
				err.Error()+"\n\nledger_dsn is set, so every transfer is recorded in this PostgreSQL ledger and fenced by it; "+advice)
			return
		}
	}
	resp.DataSourceData = rt
	resp.ResourceData = rt
}

// settingsFromModel copies the provider block into plain values, noting what is unknown.
func settingsFromModel(ctx context.Context, model providerModel) (providerSettings, diag.Diagnostics) {
	var diags diag.Diagnostics
	var out providerSettings

	out.LedgerDSN = model.LedgerDSN.ValueString()
	out.LedgerDSNUnknown = model.LedgerDSN.IsUnknown()
	if !model.PlanSendsCanaries.IsNull() && !model.PlanSendsCanaries.IsUnknown() {
		v := model.PlanSendsCanaries.ValueBool()
		out.PlanSendsCanaries = &v
	}

	switch {
	case model.Brokers.IsUnknown():
		out.BrokersUnknown = true
		return out, diags
	case model.Brokers.IsNull():
		return out, diags
	}

	out.Brokers = map[string]brokerSettings{}
	for name, elem := range model.Brokers.Elements() {
		s := brokerSettings{unknown: map[string]bool{}}
		obj, ok := elem.(types.Object)
		if !ok {
			diags.AddAttributeError(brokerAttrPath(name, ""), "Unexpected broker value",
				fmt.Sprintf("Expected an object, got %T. This is a bug in the provider; please report it.", elem))
			return out, diags
		}
		if obj.IsUnknown() {
			s.unknown[""] = true // the whole entry
			out.Brokers[name] = s
			continue
		}
		var m brokerModel
		diags.Append(obj.As(ctx, &m, basetypes.ObjectAsOptions{})...)
		if diags.HasError() {
			return out, diags
		}
		s.ManagementURL = stringValue(m.ManagementURL, "management_url", s.unknown)
		s.ManagementOrigin = stringValue(m.ManagementOrigin, "management_origin", s.unknown)
		s.Username = stringValue(m.Username, "username", s.unknown)
		s.Password = stringValue(m.Password, "password", s.unknown)
		s.BrokerName = stringValue(m.BrokerName, "broker_name", s.unknown)
		s.ConnectTimeout = stringValue(m.ConnectTimeout, "connect_timeout", s.unknown)
		s.RequestTimeout = stringValue(m.RequestTimeout, "request_timeout", s.unknown)
		s.AMQPURLs = stringListValue(m.AMQPURLs, "amqp_urls", s.unknown)

		switch {
		case m.TLS.IsUnknown():
			s.unknown["tls"] = true
		case !m.TLS.IsNull():
			var t tlsModel
			diags.Append(m.TLS.As(ctx, &t, basetypes.ObjectAsOptions{})...)
			if diags.HasError() {
				return out, diags
			}
			s.TLS = &tlsSettings{
				CACertPEM:      stringValue(t.CACertPEM, "tls.ca_cert_pem", s.unknown),
				CACertFile:     stringValue(t.CACertFile, "tls.ca_cert_file", s.unknown),
				ClientCertPEM:  stringValue(t.ClientCertPEM, "tls.client_cert_pem", s.unknown),
				ClientCertFile: stringValue(t.ClientCertFile, "tls.client_cert_file", s.unknown),
				ClientKeyPEM:   stringValue(t.ClientKeyPEM, "tls.client_key_pem", s.unknown),
				ClientKeyFile:  stringValue(t.ClientKeyFile, "tls.client_key_file", s.unknown),
				ServerName:     stringValue(t.ServerName, "tls.server_name", s.unknown),
			}
			if t.InsecureSkipVerify.IsUnknown() {
				s.unknown["tls.insecure_skip_verify"] = true
			}
			s.TLS.InsecureSkipVerify = t.InsecureSkipVerify.ValueBool()
		}
		out.Brokers[name] = s
	}
	return out, diags
}

// stringValue returns v's value, recording attr in unknown when v is not known yet.
func stringValue(v types.String, attr string, unknown map[string]bool) string {
	if v.IsUnknown() {
		unknown[attr] = true
	}
	return v.ValueString()
}

// stringListValue returns the known strings of v, recording attr in unknown when v or one of
// its elements is not known yet.
func stringListValue(v types.List, attr string, unknown map[string]bool) []string {
	if v.IsUnknown() {
		unknown[attr] = true
		return nil
	}
	var out []string
	for _, e := range v.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsUnknown() {
			unknown[attr] = true
			continue
		}
		out = append(out, s.ValueString())
	}
	return out
}

func (p *artemisProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewQueueTransferResource,
		NewTransferReturnResource,
		NewAddressResource,
		NewQueueResource,
		NewAddressSettingsResource,
	}
}

func (p *artemisProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewBrokerDataSource,
		NewQueueDataSource,
		NewOrphanedTransfersDataSource,
		NewTransferRunsDataSource,
		NewQueuesDataSource,
	}
}
