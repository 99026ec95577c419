package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/move"
)

// What several of this package's tests share.

// cliErrorRe matches an error as the Terraform CLI prints it: "Error: <summary>", the resource
// it is in, the numbered configuration line it points at, then the words of its detail, each
// allowed to wrap across lines.
func cliErrorRe(want []string) *regexp.Regexp {
	words := func(w string) string { return strings.Join(strings.Fields(regexp.QuoteMeta(w)), `\s+`) }
	parts := []string{`Error:\s+` + words(want[0]), `with\s+artemis_queue_transfer\.t,`, `\d+:\s+` + words(want[1])}
	for _, w := range want[2:] {
		parts = append(parts, words(w))
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, `.*`))
}

// logEntryStart is the timestamp that begins each entry of a Terraform or provider log.
var logEntryStart = regexp.MustCompile(`(?m)^\d{4}-\d{2}-\d{2}T`)

// testAccAdminClient returns a management client with all rights, to prepare fixtures.
func testAccAdminClient(t *testing.T, env *testenv.Env, broker string) *artemis.Client {
	t.Helper()
	b := env.Broker(t, broker)
	c, err := artemis.New(artemis.Config{Name: broker, ManagementURL: b.ManagementURL, AMQPURLs: []string{b.AMQPURL},
		Username: env.AdminUser, Password: env.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testAccQueue creates a queue for one test and removes it afterwards.
func testAccQueue(t *testing.T, env *testenv.Env, broker string, spec artemis.QueueSpec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := testAccAdminClient(t, env, broker)
	if err := c.CreateQueue(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.DestroyQueue(ctx, spec.Name)
	})
}

// asUser is the provider block of the source and the target, both as user.
func asUser(env *testenv.Env, user, password string) string {
	block := testAccProviderBlock(env, "source", "target")
	block = strings.ReplaceAll(block, fmt.Sprintf("username       = %q", env.TransferUser), fmt.Sprintf("username       = %q", user))
	return strings.ReplaceAll(block, fmt.Sprintf("password       = %q", env.TransferPassword), fmt.Sprintf("password       = %q", password))
}

// canaryQueues is the set of plan canary queues on a broker now.
func canaryQueues(t *testing.T, c *artemis.Client) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	qs, err := c.ListQueues(ctx, transfer.StagingPrefix+"canary-")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, q := range qs {
		out[q.Name] = true
	}
	return out
}

// testAccLedgerDSN creates a database of its own on the environment's PostgreSQL for one test,
// dropped when the test ends.
func testAccLedgerDSN(t *testing.T, env *testenv.Env) string {
	t.Helper()
	_, dsn := env.NewDatabase(t, "provider_test")
	return dsn
}

// withLedger adds ledger_dsn to a provider block.
func withLedger(providerBlock, dsn string) string {
	return strings.Replace(providerBlock, "provider \"artemis\" {\n", fmt.Sprintf("provider \"artemis\" {\n  ledger_dsn = %q\n", dsn), 1)
}

// withPlanSendsCanaries turns on the provider's opt-in proofs by writing at plan.
func withPlanSendsCanaries(providerBlock string) string {
	return strings.Replace(providerBlock, "provider \"artemis\" {\n", "provider \"artemis\" {\n  plan_sends_canaries = true\n", 1)
}

// testAccProtoV6ProviderFactories serves the provider in-process to the Terraform CLI used by
// acceptance tests, so that terraform init needs no registry.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"artemis": providerserver.NewProtocol6WithError(New("test")()),
}

// testAccProviderBlock returns a provider block naming the given brokers of the test
// environment (all of them when none are given), logged in as the transfer user. The target
// broker's amqps endpoint is listed after its amqp one, with the environment's CA.
func testAccProviderBlock(env *testenv.Env, names ...string) string {
	if len(names) == 0 {
		for n := range env.Brokers {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var b strings.Builder
	b.WriteString("provider \"artemis\" {\n  brokers = {\n")
	for _, n := range names {
		br := env.Brokers[n]
		urls := []string{fmt.Sprintf("%q", br.AMQPURL)}
		if br.AMQPSURL != "" {
			urls = append(urls, fmt.Sprintf("%q", br.AMQPSURL))
		}
		fmt.Fprintf(&b, "    %q = {\n", n)
		fmt.Fprintf(&b, "      amqp_urls      = [%s]\n", strings.Join(urls, ", "))
		fmt.Fprintf(&b, "      management_url = %q\n", br.ManagementURL)
		fmt.Fprintf(&b, "      username       = %q\n", env.TransferUser)
		fmt.Fprintf(&b, "      password       = %q\n", env.TransferPassword)
		if br.AMQPSURL != "" && env.TLSCAFile != "" {
			fmt.Fprintf(&b, "      tls            = { ca_cert_file = %q }\n", env.TLSCAFile)
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

const testMgmtURL = "http://127.0.0.1:8161/console/jolokia"

// diagText renders a diagnostic as "path: summary: detail" (path empty when it has none).
func diagText(d diag.Diagnostic) string {
	p := ""
	if wp, ok := d.(diag.DiagnosticWithPath); ok {
		p = wp.Path().String()
	}
	return fmt.Sprintf("%s: %s: %s", p, d.Summary(), d.Detail())
}

func fakeEnv(vars map[string]string) environment {
	return func(name string) string { return vars[name] }
}

func fakeFiles(files map[string]string) fileReader {
	return func(name string) ([]byte, error) {
		if data, ok := files[name]; ok {
			return []byte(data), nil
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
}

// oneBroker is a provider configuration with a single broker "dc1".
func oneBroker(s brokerSettings) providerSettings {
	return providerSettings{Brokers: map[string]brokerSettings{"dc1": s}}
}

// configureWith runs the provider's Configure on a raw configuration value.
func configureWith(t *testing.T, raw func(objType tftypes.Object) tftypes.Value) *provider.ConfigureResponse {
	t.Helper()
	ctx := context.Background()
	p := New("test")()
	var schemaResp provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &schemaResp)
	objType := schemaResp.Schema.Type().TerraformType(ctx).(tftypes.Object)
	resp := &provider.ConfigureResponse{}
	p.Configure(ctx, provider.ConfigureRequest{Config: tfsdk.Config{Schema: schemaResp.Schema, Raw: raw(objType)}}, resp)
	return resp
}

// oneBrokerConfig is the attributes of a provider configuration with one broker, dc1, reached
// as user transfer with password; every other attribute is null.
func oneBrokerConfig(objType tftypes.Object, password tftypes.Value) map[string]tftypes.Value {
	brokersType := objType.AttributeTypes["brokers"].(tftypes.Map)
	brokerType := brokersType.ElementType.(tftypes.Object)
	broker := nullAttrs(brokerType)
	broker["management_url"] = tftypes.NewValue(tftypes.String, testMgmtURL)
	broker["username"] = tftypes.NewValue(tftypes.String, "transfer")
	broker["password"] = password
	top := nullAttrs(objType)
	top["brokers"] = tftypes.NewValue(brokersType, map[string]tftypes.Value{"dc1": tftypes.NewValue(brokerType, broker)})
	return top
}

// errorRe matches words of an error message that Terraform may have wrapped across lines.
func errorRe(words ...string) *regexp.Regexp {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = strings.Join(strings.Fields(regexp.QuoteMeta(w)), `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(quoted, `.*`))
}

// clearArtemisEnv unsets the provider's environment variables for the test.
func clearArtemisEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "ARTEMIS_") && !strings.HasPrefix(name, "ARTEMIS_TESTENV") {
			t.Setenv(name, "")
		}
	}
}

// testAccAdminProviderBlock is testAccProviderBlock logged in as the admin user: declaring
// addresses and queues needs management rights (createAddress, updateQueue, deleteAddress) the
// transfer user does not have.
func testAccAdminProviderBlock(env *testenv.Env, names ...string) string {
	block := testAccProviderBlock(env, names...)
	block = strings.ReplaceAll(block, fmt.Sprintf("username       = %q", env.TransferUser), fmt.Sprintf("username       = %q", env.AdminUser))
	return strings.ReplaceAll(block, fmt.Sprintf("password       = %q", env.TransferPassword), fmt.Sprintf("password       = %q", env.AdminPassword))
}

// testAccCheckEffectiveSettings checks what the broker applies to an address under the match.
func testAccCheckEffectiveSettings(t *testing.T, env *testenv.Env, broker, address, policy, dla string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := testAccAdminClient(t, env, broker).AddressSettings(ctx, address)
		if err != nil {
			return err
		}
		if s.AddressFullPolicy != policy || s.DeadLetterAddress != dla {
			return fmt.Errorf("address %s on %s: policy %s, dead-letter address %q; want %s, %q", address, broker, s.AddressFullPolicy, s.DeadLetterAddress, policy, dla)
		}
		return nil
	}
}

// expectNoUnknownValues is a plan check: the resource at address plans no value as "(known
// after apply)".
type expectNoUnknownValues struct{ address string }

func (e expectNoUnknownValues) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != e.address {
			continue
		}
		unknown, _ := rc.Change.AfterUnknown.(map[string]any)
		var names []string
		for name, v := range unknown {
			if anyUnknown(v) {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			sort.Strings(names)
			resp.Error = fmt.Errorf("%s plans %d values known only after apply: %s", e.address, len(names), strings.Join(names, ", "))
		}
		return
	}
	resp.Error = fmt.Errorf("the plan has no change of %s", e.address)
}

// checkQueueHoldsExactly consumes queue and compares its message ids with want: a target must
// hold exactly what was transferred (nothing lost or doubled), and a copy's source every
// message it held, once.
func checkQueueHoldsExactly(c *artemis.Client, queue string, want []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got := testAccConsumeIDs(c, queue)
		sort.Strings(got)
		w := append([]string(nil), want...)
		sort.Strings(w)
		if strings.Join(got, ",") != strings.Join(w, ",") {
			return fmt.Errorf("queue %s holds %d messages, want exactly these %d (lost or doubled)", queue, len(got), len(w))
		}
		return nil
	}
}

// transferFixture is a source and a target queue for one acceptance test.
type transferFixture struct {
	env                *testenv.Env
	srcAdmin, tgtAdmin *artemis.Client
	src, tgt           string
	ids                []string
}

func newTransferFixture(t *testing.T, messages int) *transferFixture {
	t.Helper()
	env := testenv.Require(t)
	f := &transferFixture{env: env, srcAdmin: testAccAdminClient(t, env, "source"), tgtAdmin: testAccAdminClient(t, env, "target"),
		src: testenv.UniqueName("acc.transfer.src"), tgt: testenv.UniqueName("acc.transfer.tgt")}
	testAccQueue(t, env, "source", artemis.QueueSpec{Name: f.src, Durable: true, RingSize: -1, MaxConsumers: -1})
	testAccQueue(t, env, "target", artemis.QueueSpec{Name: f.tgt, Durable: true, RingSize: -1, MaxConsumers: -1})
	if messages > 0 {
		f.ids = testAccProduce(t, f.srcAdmin, f.src, messages)
	}
	t.Cleanup(func() { f.removeRuns(t) })
	return f
}

// removeRuns deletes whatever runs of this fixture's source queue left behind.
func (f *transferFixture) removeRuns(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runs, err := (&transfer.Engine{Source: f.srcAdmin}).Orphans(ctx)
	if err != nil {
		return
	}
	for _, r := range runs {
		if r.SourceQueue == f.src {
			for _, q := range []string{transfer.StagingQueue(r.RunID), transfer.ManifestQueue(r.RunID), move.QuarantineQueue(r.RunID)} {
				_ = f.srcAdmin.DestroyQueue(ctx, q)
			}
			_ = f.srcAdmin.RemoveAddressSettings(ctx, transfer.StagingQueue(r.RunID))
			_ = f.srcAdmin.RemoveAddressSettings(ctx, move.QuarantineQueue(r.RunID))
		}
	}
}

// copyConfig is a provider block recording in the ledger at dsn and a copy of this fixture,
// with extra attributes.
func (f *transferFixture) copyConfig(dsn, extra string) string {
	return withLedger(f.config("  mode = \"copy\"\n"+extra), dsn)
}

// config is a provider block and a transfer of this fixture, with extra attributes.
func (f *transferFixture) config(extra string) string {
	return testAccProviderBlock(f.env, "source", "target") + fmt.Sprintf(`
resource "artemis_queue_transfer" "t" {
  source = { broker = "source", queue = %q }
  target = { broker = "target", queue = %q }
%s
}
`, f.src, f.tgt, extra)
}

// importStep imports this fixture's run runID into the transfer's state, checked by check when
// it is not nil.
func (f *transferFixture) importStep(runID string, check resource.ImportStateCheckFunc) resource.TestStep {
	return resource.TestStep{
		Config:             f.config(""),
		ResourceName:       "artemis_queue_transfer.t",
		ImportState:        true,
		ImportStateId:      "source/" + runID,
		ImportStatePersist: true,
		ImportStateCheck:   check,
	}
}

func (f *transferFixture) depth(t *testing.T, c *artemis.Client, queue string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		t.Fatal(err)
	}
	return q.MessageCount
}

// checkTargetHoldsExactly consumes the target and compares its message ids with want.
func (f *transferFixture) checkTargetHoldsExactly(want []string) resource.TestCheckFunc {
	return checkQueueHoldsExactly(f.tgtAdmin, f.tgt, want)
}

//nolint:unparam // both depths are named at each call, so a check reads as the state it expects
func (f *transferFixture) checkDepths(src, tgt int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := f.srcAdmin.Queue(ctx, f.src)
		if err != nil {
			return err
		}
		d, err := f.tgtAdmin.Queue(ctx, f.tgt)
		if err != nil {
			return err
		}
		if s.MessageCount != src || d.MessageCount != tgt {
			return fmt.Errorf("source holds %d and target %d, want %d and %d", s.MessageCount, d.MessageCount, src, tgt)
		}
		return nil
	}
}

func (f *transferFixture) checkNoRuns() resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		runs, err := (&transfer.Engine{Source: f.srcAdmin}).Orphans(ctx)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.SourceQueue == f.src {
				return fmt.Errorf("run %s is still staged", r.RunID)
			}
		}
		return nil
	}
}

// testAccProduce sends n durable messages with distinct message ids.
func testAccProduce(t *testing.T, c *artemis.Client, queue string, n int) []string {
	t.Helper()
	return testAccProduceWith(t, c, queue, n, nil)
}

// testAccProduceWith sends n durable messages with distinct message ids; message i carries the
// application properties props(i) when props is not nil.
func testAccProduceWith(t *testing.T, c *artemis.Client, queue string, n int, props func(i int) map[string]any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids := make([]string, n)
	transfertest.Produce(t, ctx, c, queue, n, func(i int) *amqp.Message {
		ids[i] = fmt.Sprintf("%s-%d", queue, i)
		now := time.Now()
		msg := &amqp.Message{Header: &amqp.MessageHeader{Durable: true},
			Properties: &amqp.MessageProperties{MessageID: ids[i], CreationTime: &now}, Data: [][]byte{make([]byte, 256)}}
		if props != nil {
			msg.ApplicationProperties = props(i)
		}
		return msg
	})
	return ids
}

// testAccConsumeIDs consumes a queue and returns the message ids it held. It takes as many
// messages as the broker counts on the queue, each within a bound, rather than stopping at the
// first pause of a few seconds, which a busy machine could take for the end of the queue. The
// queue must hold still (callers run after the transfer ended). Errors show as missing ids.
func testAccConsumeIDs(c *artemis.Client, queue string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	q, err := c.Queue(ctx, queue)
	if err != nil {
		return nil
	}
	conn, err := c.Connect(ctx)
	if err != nil {
		return nil
	}
	defer conn.Close()
	// The queue's own address: a subscription queue's is not its name.
	r, err := conn.NewReceiver(ctx, q.FQQN(), artemis.ReceiverOptions{Credit: 1000})
	if err != nil {
		return nil
	}
	var ids []string
	for i := int64(0); i < q.MessageCount; i++ {
		wait, cancelWait := context.WithTimeout(ctx, 30*time.Second)
		msg, err := r.Receive(wait)
		cancelWait()
		if err != nil {
			break
		}
		_ = r.Accept(ctx, msg)
		ids = append(ids, fmt.Sprint(msg.Properties.MessageID))
	}
	return ids
}

// startInterruptedRun starts a run outside Terraform and stops it midway, as an apply that died
// would: at a precise point (runStopper), so that it is half done on any machine. Exactly one
// staging chunk has left the source; the relay confirmed at least 1,000 of it and settled what it
// had in flight; the rest of the chunk is staged.
func startInterruptedRun(t *testing.T, f *transferFixture) string {
	t.Helper()
	c := func(name string) *artemis.Client {
		b := f.env.Broker(t, name)
		cl, err := artemis.New(artemis.Config{Name: name, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
			Username: f.env.TransferUser, Password: f.env.TransferPassword})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	const chunk, batch, confirms = 2000, 100, 1000
	if len(f.ids) <= chunk {
		t.Fatalf("startInterruptedRun needs more than one staging chunk (%d) of messages, the fixture has %d", chunk, len(f.ids))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a bound, not the stop
	defer cancel()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	stopper := newRunStopper(confirms)
	e := &transfer.Engine{Source: c("source"), Target: c("target"), Options: transfer.Options{BatchSize: batch, ChunkSize: chunk},
		Hooks: stopper.hooks(stopRun)}
	res, err := e.Run(runCtx, transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "source", Queue: f.src},
		Target: transfer.Endpoint{Broker: "target", Queue: f.tgt}})
	if !errors.Is(err, transfer.ErrInterrupted) || !stopper.stopped() {
		t.Fatalf("want a run stopped after %d confirmations, got %+v, %v", confirms, res, err)
	}
	// At most the two batches in flight are settled after the stop.
	if res.Relayed < confirms || res.Relayed > confirms+2*batch {
		t.Fatalf("the stopped run relayed %d, want %d to %d", res.Relayed, confirms, confirms+2*batch)
	}
	if d := f.depth(t, f.srcAdmin, f.src); d != int64(len(f.ids)-chunk) {
		t.Fatalf("the stopped run left %d on the source, want all but its one chunk: %d", d, len(f.ids)-chunk)
	}
	// The broker applies the relay's last acknowledgements after Accept returned (settle mode
	// first), so staging reaches what was not relayed a moment later; bounded wait.
	want := int64(chunk) - res.Relayed
	staged := int64(-1)
	for deadline := time.Now().Add(30 * time.Second); staged != want && time.Now().Before(deadline); {
		if staged = f.depth(t, f.srcAdmin, transfer.StagingQueue(res.RunID)); staged != want {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if staged != want {
		t.Fatalf("staging holds %d, want the %d of the chunk not relayed", staged, want)
	}
	return res.RunID
}

// warningWith reports whether the provider's TRACE log shows a warning diagnostic whose entry
// matches re.
func warningWith(logs string, re *regexp.Regexp) bool {
	starts := logEntryStart.FindAllStringIndex(logs, -1)
	for i, st := range starts {
		end := len(logs)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		entry := logs[st[0]:end]
		if strings.Contains(entry, "Response contains warning diagnostic") && re.MatchString(entry) {
			return true
		}
	}
	return false
}

func newRunStopper(confirms int64) *runStopper { return &runStopper{confirms: confirms} }

// testAccFactoriesWithRunHooks serves, like testAccProtoV6ProviderFactories, a provider whose
// transfer engines get their hooks from h.
func testAccFactoriesWithRunHooks(h runHooks) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"artemis": providerserver.NewProtocol6WithError(&artemisProvider{version: "test", runHooks: h}),
	}
}

// traceLogs sends the TRACE logs of the Terraform CLI and of the provider (served in-process)
// for this test to files in a folder of its own, and returns a function that reads them all.
// The test harness's own log is off: it quotes each step's configuration as the test wrote it,
// secrets included, which neither Terraform nor the provider does.
func traceLogs(t *testing.T) func() string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TF_LOG_PATH_MASK", filepath.Join(dir, "%s.log"))
	t.Setenv("TF_ACC_LOG", "TRACE")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_LOG_SDK_HELPER_RESOURCE", "OFF")
	return func() string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			all.Write(data)
		}
		if all.Len() == 0 {
			t.Fatal("no log was written: the scan would prove nothing")
		}
		return all.String()
	}
}

func newTerraformCLI(t *testing.T, p *artemisProvider) *terraformCLI {
	t.Helper()
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if os.Getenv("TF_ACC") == "" || bin == "" {
		t.Skip("acceptance tests need TF_ACC=1 and TF_ACC_TERRAFORM_PATH")
	}
	ctx, cancel := context.WithCancel(context.Background())
	reattach, closed := make(chan *plugin.ReattachConfig, 1), make(chan struct{})
	go func() {
		_ = tf6server.Serve(providerAddress, providerserver.NewProtocol6(p), tf6server.WithDebug(ctx, reattach, closed),
			tf6server.WithGoPluginLogger(hclog.NewNullLogger()), tf6server.WithoutLogStderrOverride(), tf6server.WithoutLogLocation())
	}()
	var cfg *plugin.ReattachConfig
	select {
	case cfg = <-reattach:
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("the provider server did not start")
	}
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	value, err := json.Marshal(map[string]any{providerAddress: map[string]any{
		"Protocol": string(cfg.Protocol), "ProtocolVersion": 6, "Pid": cfg.Pid, "Test": true,
		"Addr": map[string]string{"Network": cfg.Addr.Network(), "String": cfg.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cliConfig := filepath.Join(dir, "cli.tfrc") // no user configuration, nothing downloaded
	if err := os.WriteFile(cliConfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tf := &terraformCLI{dir: filepath.Join(dir, "config"), bin: bin,
		env: append(os.Environ(), "TF_REATTACH_PROVIDERS="+string(value), "TF_CLI_CONFIG_FILE="+cliConfig,
			"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")}
	if err := os.Mkdir(tf.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tf.write(t, "versions.tf", `terraform {
  required_providers {
    artemis = { source = "`+providerAddress+`" }
  }
}
`)
	return tf
}

// nullAttrs returns every attribute of objType as null, to be overridden.
func nullAttrs(objType tftypes.Object) map[string]tftypes.Value {
	vals := map[string]tftypes.Value{}
	for name, typ := range objType.AttributeTypes {
		vals[name] = tftypes.NewValue(typ, nil)
	}
	return vals
}

// anyUnknown reports whether a value of a plan's after_unknown marks anything unknown: true, or
// true somewhere inside the object or list of a nested attribute.
func anyUnknown(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case map[string]any:
		for _, inner := range v {
			if anyUnknown(inner) {
				return true
			}
		}
	case []any:
		for _, inner := range v {
			if anyUnknown(inner) {
				return true
			}
		}
	}
	return false
}

// runStopper stops the first transfer run it is given hooks for at a precise point, whatever the
// machine's speed: staging pauses after its first chunk, so exactly one chunk has left the source;
// once the target has confirmed `confirms` messages of that chunk, the run's context is cancelled
// and staging is released, and staging sees the cancel before it asks for another chunk. The
// relay settles the batches it has in flight (at most two) and stops, so part of the chunk stays
// staged: a run half done, on a fast machine as on a slow one. confirms plus two batches must be
// less than the chunk. (Messages with an expiry are staged window by window, relaying each window
// in the staging goroutine before the next; the fixtures here have none.)
type runStopper struct {
	confirms int64
	used     atomic.Bool
	done     atomic.Bool
}

// hooks returns the hooks that stop the first run, and none for every later run (the resume).
func (s *runStopper) hooks(cancel context.CancelFunc) transfer.Hooks {
	if !s.used.CompareAndSwap(false, true) {
		return transfer.Hooks{}
	}
	release := make(chan struct{})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			s.done.Store(true)
			cancel() // before the release, so that staging sees it
			close(release)
		})
	}
	var chunks, confirmed atomic.Int64
	return transfer.Hooks{
		AfterStageChunk: func() {
			if chunks.Add(1) != 1 {
				return
			}
			select {
			case <-release:
			case <-time.After(stagingPauseLimit):
			}
		},
		AfterConfirm: func() {
			if confirmed.Add(1) == s.confirms {
				stop()
			}
		},
	}
}

// stopped reports whether the run was stopped at its point (and not, say, failed before it).
func (s *runStopper) stopped() bool { return s.done.Load() }

// providerAddress is the provider's registry address (the provider's main serves it under the same).
const providerAddress = "registry.terraform.io/artemis-studio/artemis"

// terraformCLI runs the Terraform CLI of TF_ACC_TERRAFORM_PATH in a folder of its own against a
// provider served by the test process, as the acceptance tests' framework does, for
// configurations that framework cannot check: its state checks reject resources with for_each.
// The provider being in the test process, its runHooks and canaryProbed reach the test.
type terraformCLI struct {
	dir, bin string
	env      []string
}

func (tf *terraformCLI) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(tf.dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// run runs a terraform command (-no-color added) and fails the test on an error, with the
// command's output.
func (tf *terraformCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := tf.command(args...)
	if err != nil {
		t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
	}
	return out
}

// command runs a terraform command (-no-color added), for at most ten minutes, and returns its
// output and how it ended.
func (tf *terraformCLI) command(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	all := append([]string{args[0], "-no-color"}, args[1:]...)
	cmd := exec.CommandContext(ctx, tf.bin, all...)
	cmd.Dir, cmd.Env = tf.dir, tf.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// output returns `terraform output -json name`: the value as JSON, terraform's stdout alone, as
// an operator redirects it to a file.
func (tf *terraformCLI) output(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tf.bin, "output", "-no-color", "-json", name)
	cmd.Dir, cmd.Env = tf.dir, tf.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, stderr.String())
	}
	return stdout.String()
}

// exitCode runs a terraform command (-no-color added) whose exit status is its answer, such as
// `plan -detailed-exitcode` (0: no changes, 2: changes, 1: an error), and returns the status
// with the command's output; it fails the test only when terraform could not run.
func (tf *terraformCLI) exitCode(t *testing.T, args ...string) (int, string) {
	t.Helper()
	out, err := tf.command(args...)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out
	case errors.As(err, &exit):
		return exit.ExitCode(), out
	}
	t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
	return -1, ""
}

// stateValue returns an attribute of a resource instance (address as Terraform writes it,
// such as x.y["k"]) from `terraform show -json`, as text.
func (tf *terraformCLI) stateValue(t *testing.T, address, attribute string) string {
	t.Helper()
	var state struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(tf.run(t, "show", "-json")), &state); err != nil {
		t.Fatalf("terraform show -json: %v", err)
	}
	for _, r := range state.Values.RootModule.Resources {
		if r.Address == address {
			v, _ := json.Marshal(r.Values[attribute])
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
			return string(v)
		}
	}
	t.Fatalf("%s is not in state", address)
	return ""
}

// stagingPauseLimit bounds how long a runStopper holds staging: only a run that fails before
// its n-th confirmation waits this long, and the test then fails on the run not being stopped.
const stagingPauseLimit = 2 * time.Minute
