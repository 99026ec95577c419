package provider

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// ---------------------------------------------------------------------------------------------
// The bad-input catalogue: one bad value per configuration, against the real brokers. Each is
// refused by terraform plan with an error on the attribute at fault, whose summary names the
// attribute and whose text says what to do, and nothing moves.

// badInput is one configuration of the catalogue: the fixture's transfer with one thing wrong.
type badInput struct {
	name string
	// src and tgt replace the fixture's endpoints ("source"/f.src and "target"/f.tgt).
	src, tgt func(f *transferFixture) transfer.Endpoint
	filter   string
	ids      []string
	tuning   string // extra attribute lines, e.g. "batch_size = 0"
	// tgtKnownAtApply, when set, is the target queue's name, given through a terraform_data
	// resource so that the plan does not know it: only apply can refuse it.
	tgtKnownAtApply string
	// brokers edits the provider block, which names both brokers as the transfer user.
	brokers func(t *testing.T, f *transferFixture, b map[string]*brokerBlock)
	// want are words of the error in the order the CLI prints them: the summary (which names
	// the attribute), the configuration line Terraform points at, then the detail (what to do).
	want []string
	// at is the attribute path the provider puts the error on (in tftypes' notation, as
	// terraform-plugin-go logs it); empty for an error the framework raises before the provider.
	at *tftypes.AttributePath
}

// attrPath is the path of a top-level attribute, or of an attribute of source or target.
func attrPath(names ...string) *tftypes.AttributePath {
	p := tftypes.NewAttributePath()
	for _, n := range names {
		p = p.WithAttributeName(n)
	}
	return p
}

// diagnosticOnPath reports whether the provider's TRACE log shows a diagnostic of severity
// ("error", "warning") on path at whose log entry holds every one of words (its summary, its
// detail). An entry spans lines when a field (the detail) does.
func diagnosticOnPath(logs, severity string, at *tftypes.AttributePath, words ...string) bool {
	starts := logEntryStart.FindAllStringIndex(logs, -1)
	for i, st := range starts {
		end := len(logs)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		entry := strings.ReplaceAll(logs[st[0]:end], `\`, "") // the log quotes the path's quotes
		if !strings.Contains(entry, "Response contains "+severity+" diagnostic") ||
			!strings.Contains(entry, `diagnostic_attribute="`+at.String()+`"`) {
			continue
		}
		all := true
		for _, w := range words {
			all = all && strings.Contains(entry, w)
		}
		if all {
			return true
		}
	}
	return false
}

// brokerBlock is one broker of a test's provider block.
type brokerBlock struct {
	amqpURLs                   []string
	managementURL              string
	username, password, caFile string
}

func (f *transferFixture) brokerBlocks() map[string]*brokerBlock {
	out := map[string]*brokerBlock{}
	for _, name := range []string{"source", "target"} {
		b := f.env.Brokers[name]
		out[name] = &brokerBlock{amqpURLs: []string{b.AMQPURL}, managementURL: b.ManagementURL,
			username: f.env.TransferUser, password: f.env.TransferPassword}
	}
	return out
}

func providerBlock(brokers map[string]*brokerBlock) string {
	var b strings.Builder
	b.WriteString("provider \"artemis\" {\n  brokers = {\n")
	for _, name := range []string{"source", "target"} {
		br := brokers[name]
		urls := make([]string, len(br.amqpURLs))
		for i, u := range br.amqpURLs {
			urls[i] = fmt.Sprintf("%q", u)
		}
		fmt.Fprintf(&b, "    %q = {\n      amqp_urls      = [%s]\n      management_url = %q\n", name, strings.Join(urls, ", "), br.managementURL)
		fmt.Fprintf(&b, "      username       = %q\n      password       = %q\n", br.username, br.password)
		if br.caFile != "" {
			fmt.Fprintf(&b, "      tls            = { ca_cert_file = %q }\n", br.caFile)
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// spec is the transfer the row configures.
func (in badInput) spec(f *transferFixture) transfer.Spec {
	s := transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "source", Queue: f.src},
		Target: transfer.Endpoint{Broker: "target", Queue: f.tgt}, Selection: core.Selection{Filter: in.filter, MessageIDs: in.ids}}
	if in.src != nil {
		s.Source = in.src(f)
	}
	if in.tgt != nil {
		s.Target = in.tgt(f)
	}
	if in.tgtKnownAtApply != "" {
		s.Target.Queue = in.tgtKnownAtApply
	}
	return s
}

func (in badInput) config(t *testing.T, f *transferFixture) string {
	brokers := f.brokerBlocks()
	if in.brokers != nil {
		in.brokers(t, f, brokers)
	}
	s := in.spec(f)
	var sel strings.Builder
	if in.filter != "" {
		fmt.Fprintf(&sel, "  filter = %q\n", in.filter)
	}
	if len(in.ids) > 0 {
		quoted := make([]string, len(in.ids))
		for i, id := range in.ids {
			quoted[i] = fmt.Sprintf("%q", id)
		}
		fmt.Fprintf(&sel, "  message_ids = [%s]\n", strings.Join(quoted, ", "))
	}
	if in.tuning != "" {
		fmt.Fprintf(&sel, "  %s\n", in.tuning)
	}
	target, later := fmt.Sprintf("%q", s.Target.Queue), ""
	if in.tgtKnownAtApply != "" {
		target = "terraform_data.q.output"
		later = fmt.Sprintf("resource \"terraform_data\" \"q\" {\n  input = %q\n}\n", in.tgtKnownAtApply)
	}
	return providerBlock(brokers) + later + fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = %q, queue = %q }
  target = { broker = %q, queue = %s }
%s}
`, s.Source.Broker, s.Source.Queue, s.Target.Broker, target, sel.String())
}

// checkNothingMoved fails the test unless the source still holds its n messages, the target
// none, and the source broker no staging queue of the transfer nor a run of the source queue.
func (f *transferFixture) checkNothingMoved(t *testing.T, spec transfer.Spec, n int64) {
	t.Helper()
	if d := f.depth(t, f.srcAdmin, f.src); d != n {
		t.Errorf("the source holds %d messages, want the %d it held before", d, n)
	}
	if d := f.depth(t, f.tgtAdmin, f.tgt); d != 0 {
		t.Errorf("the target holds %d messages, want none", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	staged, err := f.srcAdmin.ListQueues(ctx, transfer.StagingPrefix+spec.Key()+"-")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range staged {
		t.Errorf("staging queue %s of this transfer is left on the source (%d messages)", q.Name, q.MessageCount)
	}
	if err := f.checkNoRuns()(nil); err != nil {
		t.Error(err)
	}
}

// freeLoopbackPort returns a loopback port that nothing listens on: one the kernel just handed
// out and that was closed again.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// expiredCAFile re-issues the environment's CA, with its own key and name (the exact bytes, so that the broker's certificate names it as issuer), as a certificate
// that expired yesterday: the broker's certificate chains to it, and only its validity is wrong.
func expiredCAFile(t *testing.T, caFile string) string {
	t.Helper()
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(filepath.Dir(caFile), "ca.key"))
	if err != nil {
		t.Skipf("the environment's CA key is not readable, so no expired copy of its CA can be made: %v", err)
	}
	block, _ := pem.Decode(caPEM)
	if block == nil {
		t.Fatalf("%s holds no PEM certificate", caFile)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		t.Fatal("the CA key is not PEM")
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		if key, err = x509.ParsePKCS1PrivateKey(kb.Bytes); err != nil {
			t.Fatalf("the CA key is neither PKCS#8 nor PKCS#1: %v", err)
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), RawSubject: ca.RawSubject, SubjectKeyId: ca.SubjectKeyId,
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, ca.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "expired-ca.pem")
	if err := os.WriteFile(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// wrongCAFile writes a freshly made CA that signed nothing of the broker's.
func wrongCAFile(t *testing.T) string {
	t.Helper()
	caPEM, _ := testenv.SelfSignedPEM(t)
	out := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(out, []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// targetOverAMQPS reaches the target only at its amqps:// acceptor, trusting caFile.
func targetOverAMQPS(caFile func(t *testing.T, f *transferFixture) string) func(*testing.T, *transferFixture, map[string]*brokerBlock) {
	return func(t *testing.T, f *transferFixture, b map[string]*brokerBlock) {
		tb := f.env.Broker(t, "target")
		if tb.AMQPSURL == "" || f.env.TLSCAFile == "" {
			t.Skip("the environment's target has no amqps acceptor")
		}
		b["target"].amqpURLs = []string{tb.AMQPSURL}
		b["target"].caFile = caFile(t, f)
	}
}

const badInputMessages = 5

// resourceLine is the line Terraform points at for an attribute inside source = {...} or
// target = {...}: it cannot point inside an object, which is why the summary names the attribute.
const resourceLine = `resource "artemis_queue_transfer" "t" {`

func badInputCatalogue() []badInput {
	onSource := func(queue string) func(*transferFixture) transfer.Endpoint {
		return func(*transferFixture) transfer.Endpoint { return transfer.Endpoint{Broker: "source", Queue: queue} }
	}
	return []badInput{
		{
			name:   "malformed filter",
			filter: "a ===",
			want:   []string{"The broker rejects the filter (filter)", `filter = "a ==="`, "fix it and plan again"},
			at:     attrPath("filter"),
		},
		{
			name: "unknown source queue",
			src: func(*transferFixture) transfer.Endpoint {
				return transfer.Endpoint{Broker: "source", Queue: "acc.bad.no-such-source"}
			},
			want: []string{"Source queue does not exist (source.queue)", resourceLine, "Check the queue name"},
			at:   attrPath("source", "queue"),
		},
		{
			name: "unknown target queue",
			tgt: func(*transferFixture) transfer.Endpoint {
				return transfer.Endpoint{Broker: "target", Queue: "acc.bad.no-such-target"}
			},
			want: []string{"Target queue does not exist (target.queue)", resourceLine, "Create the queue"},
			at:   attrPath("target", "queue"),
		},
		{
			name: "unknown source broker key",
			src:  func(f *transferFixture) transfer.Endpoint { return transfer.Endpoint{Broker: "nowhere", Queue: f.src} },
			want: []string{"Unknown broker (source.broker)", resourceLine, "Set source.broker to one of the keys of the provider's brokers"},
			at:   attrPath("source", "broker"),
		},
		{
			name: "unknown target broker key",
			tgt:  func(f *transferFixture) transfer.Endpoint { return transfer.Endpoint{Broker: "nowhere", Queue: f.tgt} },
			want: []string{"Unknown broker (target.broker)", resourceLine, "Set target.broker to one of the keys of the provider's brokers"},
			at:   attrPath("target", "broker"),
		},
		{
			name: "wrong source password",
			brokers: func(_ *testing.T, _ *transferFixture, b map[string]*brokerBlock) {
				b["source"].password = "not-the-password"
			},
			want: []string{"The source broker refused the login (source.broker)", resourceLine, "Check username and password", "Nothing was moved"},
			at:   attrPath("source", "broker"),
		},
		{
			name: "wrong target password",
			brokers: func(_ *testing.T, _ *transferFixture, b map[string]*brokerBlock) {
				b["target"].password = "not-the-password"
			},
			want: []string{"The target broker refused the login (target.broker)", resourceLine, "Check username and password", "Nothing was moved"},
			at:   attrPath("target", "broker"),
		},
		{
			name:    "target over AMQPS with a CA that signed nothing of the broker's",
			brokers: targetOverAMQPS(func(t *testing.T, _ *transferFixture) string { return wrongCAFile(t) }),
			want: []string{"The target broker's TLS certificate is not trusted (target.broker)", resourceLine,
				"certificate signed by unknown authority", "tls.ca_cert_file"},
			at: attrPath("target", "broker"),
		},
		{
			name:    "target over AMQPS with an expired CA certificate",
			brokers: targetOverAMQPS(func(t *testing.T, f *transferFixture) string { return expiredCAFile(t, f.env.TLSCAFile) }),
			want: []string{"The target broker's TLS certificate is not trusted (target.broker)", resourceLine,
				"certificate has expired", "be valid now"},
			at: attrPath("target", "broker"),
		},
		{
			name: "source management_url on a loopback port nobody listens on",
			brokers: func(t *testing.T, _ *transferFixture, b map[string]*brokerBlock) {
				b["source"].managementURL = fmt.Sprintf("http://127.0.0.1:%d/console/jolokia", freeLoopbackPort(t))
			},
			want: []string{"Cannot reach the source broker (source.broker)", resourceLine, "connection refused", "that the broker runs"},
			at:   attrPath("source", "broker"),
		},
		{
			name: "target amqp_urls on a loopback port nobody listens on",
			brokers: func(t *testing.T, _ *transferFixture, b map[string]*brokerBlock) {
				b["target"].amqpURLs = []string{fmt.Sprintf("amqp://127.0.0.1:%d", freeLoopbackPort(t))}
			},
			want: []string{"Cannot reach the target broker (target.broker)", resourceLine, "connection refused", "amqp_urls"},
			at:   attrPath("target", "broker"),
		},
		{name: "zero batch_size", tuning: "batch_size = 0",
			want: []string{"Invalid transfer (batch_size)", "batch_size = 0", fmt.Sprintf("from 1 to %d", artemis.MaxCredit)}, at: attrPath("batch_size")},
		{name: "negative batch_size", tuning: "batch_size = -1",
			want: []string{"Invalid transfer (batch_size)", "batch_size = -1", fmt.Sprintf("from 1 to %d", artemis.MaxCredit)}, at: attrPath("batch_size")},
		{name: "huge batch_size", tuning: "batch_size = 1000000",
			want: []string{"Invalid transfer (batch_size)", "batch_size = 1000000", fmt.Sprintf("from 1 to %d", artemis.MaxCredit), "credit window"}, at: attrPath("batch_size")},
		{name: "zero staging_chunk_size", tuning: "staging_chunk_size = 0",
			want: []string{"Invalid transfer (staging_chunk_size)", "staging_chunk_size = 0", fmt.Sprintf("from 1 to %d", maxStagingChunkSize)}, at: attrPath("staging_chunk_size")},
		{name: "negative staging_chunk_size", tuning: "staging_chunk_size = -5",
			want: []string{"Invalid transfer (staging_chunk_size)", "staging_chunk_size = -5", fmt.Sprintf("from 1 to %d", maxStagingChunkSize)}, at: attrPath("staging_chunk_size")},
		{name: "huge staging_chunk_size", tuning: "staging_chunk_size = 1000000000",
			want: []string{"Invalid transfer (staging_chunk_size)", "staging_chunk_size = 1000000000", fmt.Sprintf("from 1 to %d", maxStagingChunkSize), "management lock"}, at: attrPath("staging_chunk_size")},
		{name: "zero max_in_flight_bytes", tuning: "max_in_flight_bytes = 0",
			want: []string{"Invalid transfer (max_in_flight_bytes)", "max_in_flight_bytes = 0", fmt.Sprintf("at least %d", minMaxInFlightBytes)}, at: attrPath("max_in_flight_bytes")},
		{name: "negative max_in_flight_bytes", tuning: "max_in_flight_bytes = -1048576",
			want: []string{"Invalid transfer (max_in_flight_bytes)", "max_in_flight_bytes = -1048576", fmt.Sprintf("at least %d", minMaxInFlightBytes)}, at: attrPath("max_in_flight_bytes")},
		// The framework converts the configuration before any validator runs, and reports a number
		// beyond int64 as a "Configuration Read Error" (calling it a provider bug); it does point
		// at the line. Only a Number attribute could say better.
		{name: "max_in_flight_bytes beyond a 64-bit integer", tuning: "max_in_flight_bytes = 99999999999999999999",
			want: []string{"Configuration Read Error", "max_in_flight_bytes = 99999999999999999999",
				"cannot be represented as a 64-bit integer"}},
		{
			name: "target is a run's staging queue",
			tgt: func(*transferFixture) transfer.Endpoint {
				return transfer.Endpoint{Broker: "target", Queue: transfer.StagingPrefix + "0123456789ab-mq6hez28"}
			},
			want: []string{"Invalid transfer (target.queue)", resourceLine, "names a queue of a transfer run", "Point target.queue at an application queue"},
			at:   attrPath("target", "queue"),
		},
		{
			name: "source is a run's staging queue",
			src:  onSource(transfer.StagingPrefix + "0123456789ab-mq6hez28"),
			want: []string{"Invalid transfer (source.queue)", resourceLine, "names a queue of a transfer run", "artemis_transfer_return"},
			at:   attrPath("source", "queue"),
		},
		{
			name: "target is the source queue",
			tgt:  func(f *transferFixture) transfer.Endpoint { return transfer.Endpoint{Broker: "source", Queue: f.src} },
			want: []string{"Source and target are the same queue (target.queue)", resourceLine, "Point target.queue at another queue"},
			at:   attrPath("target", "queue"),
		},
		{
			name:            "target known only at apply is a run's staging queue",
			tgtKnownAtApply: transfer.StagingPrefix + "0123456789ab-mq6hez28",
			want:            []string{"Invalid transfer (target.queue)", resourceLine, "names a queue of a transfer run"},
			at:              attrPath("target", "queue"),
		},
		{
			name:            "target known only at apply does not exist",
			tgtKnownAtApply: "acc.bad.no-such-target-at-apply",
			want:            []string{"Target queue does not exist (target.queue)", resourceLine, "Create the queue"},
			at:              attrPath("target", "queue"),
		},
		{
			name: "empty target queue name",
			tgt:  func(*transferFixture) transfer.Endpoint { return transfer.Endpoint{Broker: "target", Queue: ""} },
			want: []string{"Invalid transfer (target.queue)", resourceLine, "at least 1"},
			at:   attrPath("target", "queue"),
		},
		{
			name:   "filter and message_ids both",
			filter: "region = 'eu'", ids: []string{"ID:1"},
			want: []string{"Invalid transfer (filter)", `filter = "region = 'eu'"`, "message_ids"},
			at:   attrPath("filter"),
		},
		{
			name: "an empty message id", ids: []string{"ID:1", ""},
			want: []string{"Invalid transfer (message_ids[1])", "message_ids", "at least 1"},
			at:   attrPath("message_ids").WithElementKeyInt(1),
		},
	}
}

func TestAccQueueTransfer_BadInputIsRefusedOnItsAttributeAndMovesNothing(t *testing.T) {
	for _, in := range badInputCatalogue() {
		t.Run(in.name, func(t *testing.T) {
			f := newTransferFixture(t, badInputMessages)
			logs := traceLogs(t)
			config := in.config(t, f)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      config,
					PlanOnly:    in.tgtKnownAtApply == "",
					ExpectError: cliErrorRe(in.want),
				}},
			})
			f.checkNothingMoved(t, in.spec(f), badInputMessages)
			if in.at != nil && !diagnosticOnPath(logs(), "error", in.at, in.want[0]) {
				if os.Getenv("BAD_INPUT_DUMP") != "" {
					_ = os.WriteFile(os.Getenv("BAD_INPUT_DUMP"), []byte(logs()), 0o600)
				}
				t.Errorf("the provider's error %q is not on %s", in.want[0], in.at)
			}
		})
	}
}

// Message ids that are not on the queue are no error: the plan warns that none of them is
// selected now, and apply completes a run that moves nothing.
func TestAccQueueTransfer_MessageIDsNotOnTheQueuePlanAWarningAndMoveNothing(t *testing.T) {
	f := newTransferFixture(t, badInputMessages)
	logs := traceLogs(t)
	in := badInput{ids: []string{"ID:00000000-0000-0000-0000-00000000dead", "not-on-the-queue"}}
	config := in.config(t, f)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, PlanOnly: true, ExpectNonEmptyPlan: true},
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("messages_relayed"), knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownValue("artemis_queue_transfer.t", tfjsonpath.New("status"), knownvalue.StringExact("completed")),
				},
			},
		},
	})
	f.checkNothingMoved(t, in.spec(f), badInputMessages)
	// The provider's plan answered with the warning on message_ids; terraform-plugin-go logs
	// every diagnostic it returns.
	warned := diagnosticOnPath(logs(), "warning", attrPath("message_ids"),
		"0 of the listed message ids are selected now (message_ids)", "ids not on the queue are not moved")
	if !warned {
		t.Error(`the plan gave no warning on message_ids saying "0 of the listed message ids are selected now"`)
	}
}

// ---------------------------------------------------------------------------------------------
// Unit tests of the same refusals, no broker.

// Values that were unknown when the schema's validators ran are refused by the plan with the
// same summaries, on their attributes.
func TestAddSpecErrors_NameTheAttributeInSummaryAndPath(t *testing.T) {
	valid := transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "dc1", Queue: "orders"},
		Target: transfer.Endpoint{Broker: "dc2", Queue: "orders"}}
	tests := []struct {
		name   string
		change func(*transfer.Spec)
		path   path.Path
		want   []string
	}{
		{"staging target", func(s *transfer.Spec) { s.Target.Queue = transfer.StagingPrefix + "x" },
			path.Root("target").AtName("queue"), []string{"Invalid transfer (target.queue)", "application queue"}},
		{"staging source", func(s *transfer.Spec) { s.Source.Queue = transfer.StagingPrefix + "x" },
			path.Root("source").AtName("queue"), []string{"Invalid transfer (source.queue)"}},
		{"same queue", func(s *transfer.Spec) { s.Target = s.Source },
			path.Root("target").AtName("queue"), []string{"Source and target are the same queue (target.queue)", "another queue"}},
		{"empty broker", func(s *transfer.Spec) { s.Source.Broker = "" },
			path.Root("source").AtName("broker"), []string{"Invalid transfer (source.broker)", "is empty"}},
		{"unsupported mode", func(s *transfer.Spec) { s.Mode = "mirror" },
			path.Root("mode"), []string{"Invalid transfer (mode)", `set mode = "move"`}},
		{"filter and ids", func(s *transfer.Spec) {
			s.Selection = core.Selection{Filter: "a = 1", MessageIDs: []string{"ID:1"}}
		},
			path.Root("filter"), []string{"Invalid transfer (filter)", "Remove one"}},
		{"blank id", func(s *transfer.Spec) { s.Selection.MessageIDs = []string{"ID:1", " "} },
			path.Root("message_ids").AtListIndex(1), []string{"Invalid transfer (message_ids[1])"}},
	}
	var none diag.Diagnostics
	if !addSpecErrors(valid, &none) || none.HasError() {
		t.Fatalf("a valid spec was refused: %v", none)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := valid
			tt.change(&s)
			var diags diag.Diagnostics
			if addSpecErrors(s, &diags) {
				t.Fatal("the spec was accepted")
			}
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %d: %v", len(diags), diags)
			}
			d := diags[0]
			wp, ok := d.(diag.DiagnosticWithPath)
			if !ok || !wp.Path().Equal(tt.path) {
				t.Errorf("the error is not on %s: %s", tt.path, diagText(d))
			}
			for _, w := range tt.want {
				if !strings.Contains(d.Summary()+": "+d.Detail(), w) {
					t.Errorf("the error does not say %q: %s", w, diagText(d))
				}
			}
		})
	}
}
