package move

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// What several of this package's tests share.

func newLedgerFixture(t *testing.T, ctx context.Context, name string, n int) *ledgerFixture {
	t.Helper()
	env := testenv.Require(t)
	f := &ledgerFixture{env: env, srcAdmin: testenv.Client(t, env, "source", true), tgtAdmin: testenv.Client(t, env, "target", true)}
	f.dsn = transfertest.LedgerDSN(t, env)
	f.ledger = testenv.OpenLedger(t, f.dsn)
	src, tgt := testenv.UniqueName(name+".src"), testenv.UniqueName(name+".tgt")
	testenv.FixtureQueue(t, ctx, f.srcAdmin, src)
	testenv.FixtureQueue(t, ctx, f.tgtAdmin, tgt)
	env.Produce(t, "source", "queue://"+src, n)
	f.want = transfertest.BrowseIDs(t, ctx, f.srcAdmin, src)
	if len(f.want) != n {
		t.Fatalf("browsed %d source messages, produced %d", len(f.want), n)
	}
	f.spec = core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt}}
	return f
}

// The two-process fencing test runs a move in a child process (this test binary, re-executed
// for TestLedgerFenceChild) that holds its run mid-relay until told to go on.
const fenceChildEnv = "TRANSFER_LEDGER_FENCE_CHILD"

type fencePlan struct {
	Spec   core.Spec `json:"spec"`
	DSN    string    `json:"dsn"`
	HoldAt int32     `json:"hold_at"`
	// HoldPoint, when set, holds the run at that named instant instead (a core.Point).
	HoldPoint string `json:"hold_point,omitempty"`
}

func newJMSClient(t *testing.T, ctx context.Context, env *testenv.Env) *jmsClient {
	t.Helper()
	j := &jmsClient{env: env, classes: t.TempDir()}
	cmd := exec.CommandContext(ctx, "javac", "-nowarn", "-encoding", "UTF-8", "-d", j.classes, "-cp", j.libs(),
		filepath.Join("testdata", "Fidelity.java"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling testdata/Fidelity.java: %v\n%s", err, out)
	}
	return j
}

// jmsView is one message as a JMS consumer sees it: every JMS header and JMSX field by name,
// plus "class", "body" and "properties" (name → typed value).
type jmsView struct {
	Fields     map[string]string
	Properties map[string]string
}

func (v jmsView) clone() jmsView {
	return jmsView{Fields: copyMap(v.Fields), Properties: copyMap(v.Properties)}
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	return sortedKeys(seen)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jmsComparison compares JMS views of the same messages before (on the source) and after (on
// the target) a move.
type jmsComparison struct {
	view      string // what is compared, for messages
	src, tgt  string // the queues the views were read from
	dupPrefix string // the run's duplicate ids start with it
	// coreLeg allows, in a Core JMS view, what the AMQP leg changes (see amqpLegInCoreView).
	coreLeg bool
	// sameMessages is false when want is a separately produced control copy: message ids
	// then differ.
	sameMessages bool
	ignore       []string // fields not compared
}

// compare fails for every message whose view differs, field by field.
func (c jmsComparison) compare(t *testing.T, want, got map[string]jmsView) {
	t.Helper()
	for _, fid := range unionKeys(want, got) {
		w, wok := want[fid]
		g, gok := got[fid]
		if !wok || !gok {
			t.Errorf("%s: message %s is on one side only (source %v, target %v)", c.view, fid, wok, gok)
			continue
		}
		w, g = w.clone(), g.clone()
		if w.Fields["JMSDestination"] == "queue:"+c.src {
			w.Fields["JMSDestination"] = "queue:<consumed>"
		}
		if g.Fields["JMSDestination"] == "queue:"+c.tgt {
			g.Fields["JMSDestination"] = "queue:<consumed>"
		}
		// The run's duplicate-detection id: the one application property a relay adds.
		if id := g.Properties[propDuplicateID]; !strings.HasPrefix(id, "String:"+c.dupPrefix) {
			t.Errorf("%s: %s: duplicate id %q, want one starting with %q", c.view, fid, id, c.dupPrefix)
		}
		delete(g.Properties, propDuplicateID)
		if c.coreLeg {
			c.amqpLegInCoreView(t, fid, &w, &g)
		}
		if !c.sameMessages {
			delete(w.Fields, "JMSMessageID")
			delete(g.Fields, "JMSMessageID")
			delete(w.Properties, "NATIVE_MESSAGE_ID")
			delete(g.Properties, "NATIVE_MESSAGE_ID")
		}
		for _, f := range c.ignore {
			delete(w.Fields, f)
			delete(g.Fields, f)
		}
		if d := jmsDiff(w, g); len(d) > 0 {
			t.Errorf("%s: %s differs (source → target):\n\t%s", c.view, fid, strings.Join(d, "\n\t"))
		}
	}
}

// amqpLegInCoreView removes from a Core JMS view of a relayed message what Artemis changes
// because the target stores it as an AMQP message, which core.Worker.OutgoingCopy cannot prevent; the test
// TestMove_FidelityForCoreConsumersOfCoreProducedMessages shows these changes plainly:
//   - JMSDestination is the fully qualified name of the target queue, from the relay's
//     sender address (every message);
//   - a Core-produced message gets vendor properties JMS_AMQP_*, and a new JMSMessageID; its
//     own is in property NATIVE_MESSAGE_ID, checked here (an AMQP-produced message has a
//     made-up JMSMessageID on either broker);
//   - a Core-produced JMS Message without body becomes an empty BytesMessage.
func (c jmsComparison) amqpLegInCoreView(t *testing.T, fid string, want, got *jmsView) {
	t.Helper()
	if strings.Contains(got.Fields["JMSDestination"], artemis.FQQN(c.tgt, c.tgt)) {
		got.Fields["JMSDestination"] = want.Fields["JMSDestination"]
	}
	if !strings.HasPrefix(fid, "core-") {
		// An AMQP message has no Core id: each broker makes one up when converting, on the
		// source as on the target. Its AMQP message-id is NATIVE_MESSAGE_ID, compared.
		delete(want.Fields, "JMSMessageID")
		delete(got.Fields, "JMSMessageID")
		return
	}
	native := got.Properties["NATIVE_MESSAGE_ID"]
	if c.sameMessages && native != want.Fields["JMSMessageID"] {
		t.Errorf("%s: %s: NATIVE_MESSAGE_ID %s, want the source JMSMessageID %s", c.view, fid, native, want.Fields["JMSMessageID"])
	}
	delete(got.Properties, "NATIVE_MESSAGE_ID")
	got.Fields["JMSMessageID"] = want.Fields["JMSMessageID"]
	for k := range got.Properties {
		if strings.HasPrefix(k, "JMS_AMQP_") {
			delete(got.Properties, k)
		}
	}
	if want.Fields["class"] == "Message" && got.Fields["class"] == "BytesMessage" && got.Fields["body"] == "byte[]:" {
		got.Fields["class"], got.Fields["body"] = want.Fields["class"], want.Fields["body"]
	}
}

// browseRaw returns the messages of a queue as AMQP delivers them, by fid.
func browseRaw(t *testing.T, ctx context.Context, env *testenv.Env, broker, queue string, count int) map[string]*amqp.Message {
	t.Helper()
	conn, err := testenv.Client(t, env, broker, true).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b, err := conn.NewBrowser(ctx, artemis.FQQN(queue, queue), artemis.BrowserOptions{Credit: 100, IdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	out := map[string]*amqp.Message{}
	for i := 0; i < count+10; i++ {
		msg, ok, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		fid, _ := msg.ApplicationProperties["fid"].(string)
		out[fid] = msg
	}
	if len(out) != count {
		t.Fatalf("AMQP browse of %s on %s: %d messages, want %d (%s)", queue, broker, len(out), count, strings.Join(sortedKeys(out), ", "))
	}
	return out
}

// rawDiff lists the fields in which two AMQP messages differ, skipping the named fields
// ("header.ttl", "properties.to", "annotation x-opt-jms-dest", ...).
func rawDiff(want, got *amqp.Message, skip ...string) []string {
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	var diffs []string
	add := func(field string, w, g any) {
		if !skipped[field] && !reflect.DeepEqual(canonicalValue(w), canonicalValue(g)) {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", field, transfertest.Describe(w), transfertest.Describe(g)))
		}
	}
	wh, gh := valueOrZero(want.Header), valueOrZero(got.Header)
	add("header.durable", wh.Durable, gh.Durable)
	add("header.priority", wh.Priority, gh.Priority)
	add("header.ttl", wh.TTL, gh.TTL)
	add("header.first-acquirer", wh.FirstAcquirer, gh.FirstAcquirer)
	add("header.delivery-count", wh.DeliveryCount, gh.DeliveryCount)
	wp, gp := valueOrZero(want.Properties), valueOrZero(got.Properties)
	add("properties.message-id", wp.MessageID, gp.MessageID)
	add("properties.user-id", wp.UserID, gp.UserID)
	add("properties.to", wp.To, gp.To)
	add("properties.subject", wp.Subject, gp.Subject)
	add("properties.reply-to", wp.ReplyTo, gp.ReplyTo)
	add("properties.correlation-id", wp.CorrelationID, gp.CorrelationID)
	add("properties.content-type", wp.ContentType, gp.ContentType)
	add("properties.content-encoding", wp.ContentEncoding, gp.ContentEncoding)
	add("properties.absolute-expiry-time", wp.AbsoluteExpiryTime, gp.AbsoluteExpiryTime)
	add("properties.creation-time", wp.CreationTime, gp.CreationTime)
	add("properties.group-id", wp.GroupID, gp.GroupID)
	add("properties.group-sequence", wp.GroupSequence, gp.GroupSequence)
	add("properties.reply-to-group-id", wp.ReplyToGroupID, gp.ReplyToGroupID)
	for _, k := range unionKeys(annotationMap(want.DeliveryAnnotations), annotationMap(got.DeliveryAnnotations)) {
		add("delivery-annotation "+k, annotationMap(want.DeliveryAnnotations)[k], annotationMap(got.DeliveryAnnotations)[k])
	}
	for _, k := range unionKeys(annotationMap(want.Annotations), annotationMap(got.Annotations)) {
		add("annotation "+k, annotationMap(want.Annotations)[k], annotationMap(got.Annotations)[k])
	}
	for _, k := range unionKeys(want.ApplicationProperties, got.ApplicationProperties) {
		add("application-property "+k, want.ApplicationProperties[k], got.ApplicationProperties[k])
	}
	add("body data", want.Data, got.Data)
	add("body value", want.Value, got.Value)
	add("body sequence", want.Sequence, got.Sequence)
	for _, k := range unionKeys(annotationMap(want.Footer), annotationMap(got.Footer)) {
		add("footer "+k, annotationMap(want.Footer)[k], annotationMap(got.Footer)[k])
	}
	add("message-format", want.Format, got.Format)
	return diffs
}

// compareRaw fails for every message whose raw AMQP form differs before and after the move.
// "to" is left out of rawDiff: the relay drops it (see core.Worker.OutgoingCopy), so it must be absent on
// the target.
func compareRaw(t *testing.T, want, got map[string]*amqp.Message, dupPrefix string, skip ...string) {
	t.Helper()
	for _, fid := range unionKeys(want, got) {
		w, wok := want[fid]
		g, gok := got[fid]
		if !wok || !gok {
			t.Errorf("raw AMQP: message %s is on one side only (source %v, target %v)", fid, wok, gok)
			continue
		}
		if g.Properties != nil && g.Properties.To != nil {
			t.Errorf("raw AMQP: %s: to %q on the target, want none", fid, *g.Properties.To)
		}
		g = withoutDuplicateID(t, g, dupPrefix)
		if d := rawDiff(w, g, append(skip, "properties.to")...); len(d) > 0 {
			t.Errorf("raw AMQP: %s differs (source → target):\n\t%s", fid, strings.Join(d, "\n\t"))
		}
	}
}

// withoutDuplicateID checks the relay's duplicate id on a relayed message and returns the
// message without it.
func withoutDuplicateID(t *testing.T, msg *amqp.Message, dupPrefix string) *amqp.Message {
	t.Helper()
	fid := msg.ApplicationProperties["fid"]
	if id, _ := msg.ApplicationProperties[propDuplicateID].(string); !strings.HasPrefix(id, dupPrefix) {
		t.Errorf("raw AMQP: %v: duplicate id %q, want one starting with %q", fid, id, dupPrefix)
	}
	out := *msg
	out.ApplicationProperties = make(map[string]any, len(msg.ApplicationProperties))
	for k, v := range msg.ApplicationProperties {
		if k != propDuplicateID {
			out.ApplicationProperties[k] = v
		}
	}
	return &out
}

// The broker's names of the properties these tests look at.
const (
	propDuplicateID       = "_AMQ_DUPL_ID"
	propRoutingType       = "_AMQ_ROUTING_TYPE"
	propJMSXDeliveryCount = "JMSXDeliveryCount"
)

// fidelityMove moves queue src on the source broker to tgt on the target broker as the
// transfer user and returns the prefix of the duplicate ids the run gives its messages. A run
// that fails is returned to src.
func fidelityMove(t *testing.T, ctx context.Context, env *testenv.Env, src, tgt string, want int) (string, error) {
	t.Helper()
	info, err := testenv.Client(t, env, "source", true).BrokerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false)}}
	start := time.Now()
	res, err := e.Move(ctx, core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt}})
	if err != nil {
		returnStaged(t, e, res.RunID)
		return "", err
	}
	t.Logf("moved %d messages in %s", res.Relayed, time.Since(start).Round(time.Millisecond))
	if res.Staged != int64(want) || res.Relayed != int64(want) {
		t.Errorf("run staged %d and relayed %d messages, want %d", res.Staged, res.Relayed, want)
	}
	return strings.TrimSuffix(duplicateID(res.RunID, info.NodeID, 0), "0"), nil
}

// returnStaged puts back on the source queue what a failed run left in staging, so that no
// staging queue outlives the test.
func returnStaged(t *testing.T, e *Mover, runID string) {
	t.Helper()
	if runID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if res, err := e.Return(ctx, runID); err != nil {
		t.Logf("returning run %s after its failure: %v", runID, err)
	} else {
		t.Logf("returned %d staged messages of failed run %s", res.Returned, runID)
	}
}

// fidelityQueues creates a source queue (and more source queues when asked) on the source
// broker and a target queue on the target broker.
func fidelityQueues(t *testing.T, ctx context.Context, env *testenv.Env, name string, moreOnSource int) (src, tgt string, more []string) {
	t.Helper()
	srcAdmin, tgtAdmin := testenv.Client(t, env, "source", true), testenv.Client(t, env, "target", true)
	src, tgt = testenv.UniqueName(name+".src"), testenv.UniqueName(name+".tgt")
	testenv.FixtureQueue(t, ctx, srcAdmin, src)
	testenv.FixtureQueue(t, ctx, tgtAdmin, tgt)
	for i := 0; i < moreOnSource; i++ {
		q := testenv.UniqueName(name + ".control")
		testenv.FixtureQueue(t, ctx, srcAdmin, q)
		more = append(more, q)
	}
	return src, tgt, more
}

func findOrphan(t *testing.T, ctx context.Context, e *Mover, runID string) *Orphan {
	t.Helper()
	orphans, err := e.Orphans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range orphans {
		if orphans[i].RunID == runID {
			return &orphans[i]
		}
	}
	return nil
}

// fixtureQueueSpec creates a queue from a full spec for one test.
func fixtureQueueSpec(t *testing.T, ctx context.Context, c *artemis.Client, spec artemis.QueueSpec) {
	t.Helper()
	if err := c.CreateQueue(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DestroyQueue(context.Background(), spec.Name) })
}

// checkNoStaging fails if any staging queue or staging settings of run id remain.
func checkNoStaging(t *testing.T, ctx context.Context, c *artemis.Client, runID string) {
	t.Helper()
	for _, q := range []string{StagingQueue(runID), ManifestQueue(runID)} {
		if _, err := c.Queue(ctx, q); !errors.Is(err, artemis.ErrNotFound) {
			t.Errorf("queue %s still exists (%v)", q, err)
		}
	}
	s, err := c.AddressSettings(ctx, StagingQueue(runID))
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxDeliveryAttempts == -1 {
		t.Errorf("staging address settings of %s remain", runID)
	}
}

// moveFixture is a source and a target queue with messages produced by the Artemis CLI.
type moveFixture struct {
	env                *testenv.Env
	srcAdmin, tgtAdmin *artemis.Client
	src, tgt           string
	spec               core.Spec
}

//nolint:unparam // both brokers are named at each call, as a transfer names them
func newMoveFixture(t *testing.T, ctx context.Context, sourceBroker, targetBroker string, messages int) *moveFixture {
	t.Helper()
	env := testenv.Require(t)
	f := &moveFixture{env: env, srcAdmin: testenv.Client(t, env, sourceBroker, true), tgtAdmin: testenv.Client(t, env, targetBroker, true),
		src: testenv.UniqueName("move.src"), tgt: testenv.UniqueName("move.tgt")}
	testenv.FixtureQueue(t, ctx, f.srcAdmin, f.src)
	testenv.FixtureQueue(t, ctx, f.tgtAdmin, f.tgt)
	if messages > 0 {
		env.Produce(t, sourceBroker, "queue://"+f.src, messages)
	}
	f.spec = core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: sourceBroker, Queue: f.src}, Target: core.Endpoint{Broker: targetBroker, Queue: f.tgt}}
	t.Cleanup(func() { transfertest.RemoveRunsOf(t, f.srcAdmin, f.spec) })
	return f
}

func (f *moveFixture) engine(t *testing.T, opts core.Options) *Mover {
	return &Mover{setup: &core.Setup{Source: testenv.Client(t, f.env, f.spec.Source.Broker, false), Target: testenv.Client(t, f.env, f.spec.Target.Broker, false), Options: opts}}
}

// gracesBesideALiveRun are the graces of a second process while a test holds the run in a live
// one: the refusal it expects needs no retry.
var gracesBesideALiveRun = core.Graces{Busy: time.Nanosecond}

// ledgerFixture is a source queue of n messages, an empty target queue, and a ledger.
type ledgerFixture struct {
	env                *testenv.Env
	srcAdmin, tgtAdmin *artemis.Client
	spec               core.Spec
	want               []string
	ledger             *ledger.Ledger
	dsn                string
}

// checkMovedExactly checks that run runID left no staging on the source and that the target
// holds every message of the fixture once.
func (f *ledgerFixture) checkMovedExactly(ctx context.Context, t *testing.T, runID string) {
	t.Helper()
	checkNoStaging(t, ctx, f.srcAdmin, runID)
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.spec.Target.Queue, f.spec.Target.Queue)))
}

func (f *ledgerFixture) engine(t *testing.T, book core.Bookkeeper, opts core.Options) *Mover {
	if opts.BatchSize == 0 {
		opts.BatchSize = 100
	}
	if opts.ChunkSize == 0 {
		opts.ChunkSize = 500
	}
	return &Mover{setup: &core.Setup{Source: testenv.Client(t, f.env, "source", false), Target: testenv.Client(t, f.env, "target", false),
		Options: opts, Bookkeeper: book}}
}

// jmsClient runs testdata/Fidelity.java, compiled once per test.
type jmsClient struct {
	env     *testenv.Env
	classes string
}

// libs is the classpath of the JMS clients in the Artemis distribution.
func (j *jmsClient) libs() string { return filepath.Join(j.env.ArtemisHome, "lib", "*") }

func (j *jmsClient) url(t *testing.T, broker, protocol string) string {
	b := j.env.Broker(t, broker)
	if protocol == "core" {
		return b.CoreURL
	}
	// Qpid JMS sets the AMQP user-id (JMSXUserID) only when asked to.
	return b.AMQPURL + "?jms.populateJMSXUserID=true"
}

func (j *jmsClient) run(t *testing.T, ctx context.Context, broker, protocol string, args ...string) []string {
	t.Helper()
	// C1 and the serial collector: these short runs are dominated by start-up.
	all := append([]string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dfile.encoding=UTF-8", "-Dstdout.encoding=UTF-8", "-cp", j.classes + string(filepath.ListSeparator) + j.libs(),
		"Fidelity", args[0], protocol, j.url(t, broker, protocol), j.env.AdminUser, j.env.AdminPassword}, args[1:]...)
	cmd := exec.CommandContext(ctx, "java", all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("Fidelity %s %s on %s: %v\n%s", args[0], protocol, broker, err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// produce sends a message set of Fidelity.java to each queue and returns the set's fids.
//
//nolint:unparam // the broker is named at each call, as the consumers name theirs
func (j *jmsClient) produce(t *testing.T, ctx context.Context, broker, protocol, set string, queues ...string) []string {
	t.Helper()
	return j.run(t, ctx, broker, protocol, "produce", strings.Join(queues, ","), set)
}

// dump reads count messages of queue (browsing or consuming) and returns them by fid.
func (j *jmsClient) dump(t *testing.T, ctx context.Context, broker, protocol, queue, mode string, count int) map[string]jmsView {
	t.Helper()
	lines := j.run(t, ctx, broker, protocol, "dump", queue, mode, fmt.Sprint(count))
	views := map[string]jmsView{}
	for _, line := range lines {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("dump of %s: %v: %s", queue, err, line)
		}
		v := jmsView{Fields: map[string]string{}, Properties: map[string]string{}}
		for k, x := range raw {
			if props, ok := x.(map[string]any); ok {
				for pk, pv := range props {
					v.Properties[pk] = pv.(string)
				}
				continue
			}
			v.Fields[k] = x.(string)
		}
		fid := strings.TrimPrefix(v.Fields["fid"], "String:")
		if _, dup := views[fid]; dup {
			t.Fatalf("%s %s of %s on %s: message %s seen twice", protocol, mode, queue, broker, fid)
		}
		views[fid] = v
	}
	if len(views) != count {
		t.Fatalf("%s %s of %s on %s: %d messages, want %d (%s)", protocol, mode, queue, broker, len(views), count, strings.Join(sortedKeys(views), ", "))
	}
	return views
}

// jmsDiff lists the fields in which got differs from want, as "field: want → got".
func jmsDiff(want, got jmsView) []string {
	var diffs []string
	for _, k := range unionKeys(want.Fields, got.Fields) {
		if w, g := want.Fields[k], got.Fields[k]; w != g {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", k, transfertest.Short(w), transfertest.Short(g)))
		}
	}
	for _, k := range unionKeys(want.Properties, got.Properties) {
		w, wok := want.Properties[k]
		g, gok := got.Properties[k]
		switch {
		case !gok:
			diffs = append(diffs, fmt.Sprintf("property %s: %s → missing", k, transfertest.Short(w)))
		case !wok:
			diffs = append(diffs, fmt.Sprintf("property %s: missing → %s", k, transfertest.Short(g)))
		case w != g:
			diffs = append(diffs, fmt.Sprintf("property %s: %s → %s", k, transfertest.Short(w), transfertest.Short(g)))
		}
	}
	return diffs
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// canonicalValue makes equal timestamps DeepEqual, however their location is recorded.
func canonicalValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return "timestamp " + x.UTC().Format(time.RFC3339Nano)
	case *time.Time:
		if x == nil {
			return nil
		}
		return canonicalValue(*x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = canonicalValue(e)
		}
		return m
	case map[any]any:
		m := make(map[any]any, len(x))
		for k, e := range x {
			m[k] = canonicalValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = canonicalValue(e)
		}
		return l
	case [][]any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = canonicalValue(e)
		}
		return l
	}
	return v
}

func annotationMap(a amqp.Annotations) map[string]any {
	m := make(map[string]any, len(a))
	for k, v := range a {
		m[fmt.Sprint(k)] = v
	}
	return m
}

// moveInterruptedAfter runs e's move of spec and stops it, by cancelling its context, at its
// stopAt-th confirmation; the move must end interrupted. It returns the interrupted run's result.
func moveInterruptedAfter(ctx context.Context, t *testing.T, e *Mover, spec core.Spec, stopAt int64) core.Result {
	t.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var confirmed atomic.Int64
	e.setup.Hooks.AfterConfirm = func() {
		if confirmed.Add(1) == stopAt {
			cancel()
		}
	}
	res, err := e.Move(runCtx, spec)
	if !errors.Is(err, core.ErrInterrupted) {
		t.Fatalf("move: %+v, %v; want it interrupted at confirmation %d", res, err, stopAt)
	}
	return res
}

// produceFromBoth produces the message set set to queues on the source broker, once with the
// Core JMS client and once with the AMQP one, and returns every message's fidelity id.
func (j *jmsClient) produceFromBoth(t *testing.T, ctx context.Context, set string, queues ...string) []string {
	t.Helper()
	var fids []string
	for _, protocol := range []string{"core", "amqp"} {
		fids = append(fids, j.produce(t, ctx, "source", protocol, set, queues...)...)
	}
	return fids
}

// moveAfterAKill is the next apply's move of spec after a process that ran it was killed: a new
// engine on the environment's source and target, with the start grace a killed run needs.
func moveAfterAKill(t *testing.T, env *testenv.Env, spec core.Spec) (core.Result, error) {
	t.Helper()
	ctx := transfertest.Ctx(t, 3*time.Minute)
	e := &Mover{setup: &core.Setup{Source: testenv.Client(t, env, "source", false), Target: testenv.Client(t, env, "target", false), Graces: gracesAfterAKill}}
	return e.Move(ctx, spec)
}

// valueOrZero is what p points at, or T's zero value for a nil p.
func valueOrZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// moveStoppedAtSend runs e's move of spec and cancels its context just before its stopAt-th
// send.
func moveStoppedAtSend(ctx context.Context, e *Mover, spec core.Spec, stopAt int64) (core.Result, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var sends atomic.Int64
	return e.move(runCtx, spec, core.Hooks{BeforeSend: func() {
		if sends.Add(1) == stopAt {
			cancel()
		}
	}})
}

// checkOnOneBroker consumes the target and source queues and checks that together they hold
// want, each message once, and that the run's staging is gone; it returns how many each held.
func checkOnOneBroker(t *testing.T, ctx context.Context, srcAdmin, tgtAdmin *artemis.Client, src, tgt string, want []string, runID string) (onTarget, onSource int) {
	t.Helper()
	target := transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt))
	source := transfertest.ConsumeAll(t, ctx, srcAdmin, artemis.FQQN(src, src))
	transfertest.CheckSameSet(t, want, append(target, source...))
	checkNoStaging(t, ctx, srcAdmin, runID)
	return len(target), len(source)
}
