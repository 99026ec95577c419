package move

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/transfertest"
)

// The broker's names of the properties these tests look at.
const (
	propDuplicateID       = "_AMQ_DUPL_ID"
	propRoutingType       = "_AMQ_ROUTING_TYPE"
	propJMSXDeliveryCount = "JMSXDeliveryCount"
)

func ptr[T any](v T) *T { return &v }

// The fidelity tests produce messages with clients other than ours (Artemis's Core JMS client
// and Qpid JMS over AMQP, both shipped with Artemis; see testdata/Fidelity.java), look at them
// on the source before a move and on the target after it, and compare them field by field in
// three views: a Core JMS consumer's, an AMQP JMS consumer's and the raw AMQP message.

// jmsClient runs testdata/Fidelity.java, compiled once per test.
type jmsClient struct {
	env     *testenv.Env
	classes string
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

// jmsView is one message as a JMS consumer sees it: every JMS header and JMSX field by name,
// plus "class", "body" and "properties" (name → typed value).
type jmsView struct {
	Fields     map[string]string
	Properties map[string]string
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

func (v jmsView) clone() jmsView {
	return jmsView{Fields: copyMap(v.Fields), Properties: copyMap(v.Properties)}
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
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
// because the target stores it as an AMQP message, which relayCopy cannot prevent; the test
// TestMove_FidelityForCoreConsumersOfCoreProducedMessages shows these changes plainly:
//   - JMSDestination is the fully qualified name of the target queue, from the relay's
//     sender address (every message);
//   - a Core-produced message gets vendor properties JMS_AMQP_*, and a new JMSMessageID; its
//     own is in property NATIVE_MESSAGE_ID, checked here (an AMQP-produced message has a
//     made-up JMSMessageID on either broker);
//   - a Core-produced JMS Message without body becomes an empty BytesMessage.
func (c jmsComparison) amqpLegInCoreView(t *testing.T, fid string, want, got *jmsView) {
	t.Helper()
	if strings.Contains(got.Fields["JMSDestination"], c.tgt+"::"+c.tgt) {
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
	conn, err := transfertest.Client(t, env, broker, true).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b, err := conn.NewBrowser(ctx, queue+"::"+queue, artemis.BrowserOptions{Credit: 100, IdleTimeout: 5 * time.Second})
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
	var wh, gh amqp.MessageHeader
	if want.Header != nil {
		wh = *want.Header
	}
	if got.Header != nil {
		gh = *got.Header
	}
	add("header.durable", wh.Durable, gh.Durable)
	add("header.priority", wh.Priority, gh.Priority)
	add("header.ttl", wh.TTL, gh.TTL)
	add("header.first-acquirer", wh.FirstAcquirer, gh.FirstAcquirer)
	add("header.delivery-count", wh.DeliveryCount, gh.DeliveryCount)
	var wp, gp amqp.MessageProperties
	if want.Properties != nil {
		wp = *want.Properties
	}
	if got.Properties != nil {
		gp = *got.Properties
	}
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

// compareRaw fails for every message whose raw AMQP form differs before and after the move.
// "to" is left out of rawDiff: the relay drops it (see relayCopy), so it must be absent on
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

// fidelityMove moves queue src on the source broker to tgt on the target broker as the
// transfer user and returns the prefix of the duplicate ids the run gives its messages. A run
// that fails is returned to src.
func fidelityMove(t *testing.T, ctx context.Context, env *testenv.Env, src, tgt string, want int) (string, error) {
	t.Helper()
	info, err := transfertest.Client(t, env, "source", true).BrokerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Setup: &core.Setup{Source: transfertest.Client(t, env, "source", false), Target: transfertest.Client(t, env, "target", false)}}
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
	return strings.TrimSuffix(DuplicateID(res.RunID, info.NodeID, 0), "0"), nil
}

// returnStaged puts back on the source queue what a failed run left in staging, so that no
// staging queue outlives the test.
func returnStaged(t *testing.T, e *Engine, runID string) {
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
	srcAdmin, tgtAdmin := transfertest.Client(t, env, "source", true), transfertest.Client(t, env, "target", true)
	src, tgt = testenv.UniqueName(name+".src"), testenv.UniqueName(name+".tgt")
	transfertest.FixtureQueue(t, ctx, srcAdmin, src)
	transfertest.FixtureQueue(t, ctx, tgtAdmin, tgt)
	for i := 0; i < moreOnSource; i++ {
		q := testenv.UniqueName(name + ".control")
		transfertest.FixtureQueue(t, ctx, srcAdmin, q)
		more = append(more, q)
	}
	return src, tgt, more
}

// TestMove_FidelityOfJMSMessagesFromCoreAndAMQPClients moves messages of every JMS type,
// produced by Artemis's Core JMS client and by Qpid JMS over AMQP (testdata/Fidelity.java):
// text (also null), bytes, map and stream with typed entries, serialized object, body-less
// Message, an AMQP-typed object body (an amqp-value list), with properties of every JMS type,
// priorities 0 to 9, persistent and not, correlation ids (string and bytes), reply-to,
// JMSType, group id and sequence, user id, a TTL and 10 MiB bodies from both clients.
//
// It compares every field, before the move on the source and after it on the target, in
// three views: a Qpid JMS browser's (exactly, JMSMessageID and JMSTimestamp included), the raw
// AMQP message (header, properties, annotations, application properties, body sections,
// footer) and a Core JMS browser's (allowing only what the AMQP leg changes, see
// amqpLegInCoreView). Then a Core JMS consumer must receive the same from the target as from
// a control copy never moved (ids and timestamps aside: it was produced separately).
// Expiry is left to TestMove_PreservesAbsoluteExpiry.
func TestMove_FidelityOfJMSMessagesFromCoreAndAMQPClients(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 10*time.Minute)
	start := time.Now()
	src, tgt, controls := fidelityQueues(t, ctx, env, "fidelity", 1)
	control := controls[0]
	j := newJMSClient(t, ctx, env)

	var fids []string
	for _, protocol := range []string{"core", "amqp"} {
		fids = append(fids, j.produce(t, ctx, "source", protocol, "fidelity", src, control)...)
	}
	n := len(fids)
	t.Logf("produced %d messages twice (%s): %s", n, time.Since(start).Round(time.Millisecond), strings.Join(fids, " "))

	beforeCore := j.dump(t, ctx, "source", "core", src, "browse", n)
	beforeAMQP := j.dump(t, ctx, "source", "amqp", src, "browse", n)
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)
	dupPrefix, err := fidelityMove(t, ctx, env, src, tgt, n)
	if err != nil {
		t.Fatal(err)
	}
	afterCore := j.dump(t, ctx, "target", "core", tgt, "browse", n)
	afterAMQP := j.dump(t, ctx, "target", "amqp", tgt, "browse", n)
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)

	jmsComparison{view: "Qpid JMS browser", src: src, tgt: tgt, dupPrefix: dupPrefix, sameMessages: true,
		ignore: []string{"JMSExpiration"}}.compare(t, beforeAMQP, afterAMQP)
	compareRaw(t, beforeRaw, afterRaw, dupPrefix, "header.ttl", "properties.absolute-expiry-time")
	jmsComparison{view: "Core JMS browser", src: src, tgt: tgt, dupPrefix: dupPrefix, coreLeg: true, sameMessages: true,
		ignore: []string{"JMSExpiration"}}.compare(t, beforeCore, afterCore)

	controlCore := j.dump(t, ctx, "source", "core", control, "consume", n)
	targetCore := j.dump(t, ctx, "target", "core", tgt, "consume", n)
	jmsComparison{view: "Core JMS consumer, control copy → target", src: control, tgt: tgt, dupPrefix: dupPrefix, coreLeg: true,
		ignore: []string{"JMSExpiration", "JMSTimestamp"}}.compare(t, controlCore, targetCore)
	t.Logf("fidelity of %d messages checked in %s", n, time.Since(start).Round(time.Millisecond))
}

// TestMove_UndecodableMessageStopsTheRunAndIsReturned: JMS map and stream messages may hold
// char entries, which the source broker sends to the relay as AMQP char values; go-amqp cannot
// decode those. The run must stop with a clear error, every message still staged, and a return
// must put every message back on the source. (A known limitation: such messages cannot be moved.)
func TestMove_UndecodableMessageStopsTheRunAndIsReturned(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.char", 0)
	j := newJMSClient(t, ctx, env)
	var fids []string
	for _, protocol := range []string{"core", "amqp"} {
		fids = append(fids, j.produce(t, ctx, "source", protocol, "char", src)...)
	}
	n := len(fids)
	moveCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, err := fidelityMove(t, moveCtx, env, src, tgt, n) // returns the run when it fails
	if err == nil || !strings.Contains(err.Error(), "cannot decode") {
		t.Fatalf("want the run to stop on a message it cannot decode, got %v", err)
	}
	if got := transfertest.QueueDepth(t, ctx, transfertest.Client(t, env, "source", true), src) + transfertest.QueueDepth(t, ctx, transfertest.Client(t, env, "target", true), tgt); got != int64(n) {
		t.Fatalf("source and target hold %d of the %d messages (%s)", got, n, strings.Join(fids, ", "))
	}
}

// TestMove_UnconvertibleMessageIsQuarantinedNotLost moves a Core StreamMessage with a byte[]
// entry, which JMS allows. Artemis cannot convert it to AMQP and dead-letters it when the relay
// receives it. Staging's dead-letter address is the run's quarantine queue, so the message is
// parked, the run reports it instead of finishing, and a return puts it back on the source.
// (An AMQP browser dead-letters it too, so the source is browsed with Core JMS only.)
func TestMove_UnconvertibleMessageIsQuarantinedNotLost(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.streambytes", 0)
	j := newJMSClient(t, ctx, env)
	fids := j.produce(t, ctx, "source", "core", "stream-bytes", src)
	n := len(fids)
	before := j.dump(t, ctx, "source", "core", src, "browse", n)
	moveCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, err := fidelityMove(t, moveCtx, env, src, tgt, n) // returns the run when it fails
	if !errors.Is(err, errQuarantined) || !strings.Contains(err.Error(), ".quarantine") {
		t.Fatalf("want the run to report quarantined messages, got %v", err)
	}
	if got := transfertest.QueueDepth(t, ctx, transfertest.Client(t, env, "source", true), src); got != int64(n) {
		t.Fatalf("after the return the source holds %d of the %d messages (%s)", got, n, strings.Join(fids, ", "))
	}
	after := j.dump(t, ctx, "source", "core", src, "browse", n)
	for fid, b := range before {
		if a, ok := after[fid]; !ok || a.Fields["JMSType"] != b.Fields["JMSType"] {
			t.Errorf("%s is not back on the source as it was", fid)
		}
	}
}

// TestMove_PreservesAbsoluteExpiry: Artemis's broker-side move resets the staged copy's expiry
// to 0 (QueueImpl.makeCopy); the run records each expiring message's expiry before staging it
// and the relay gives it back. Messages with a TTL from Core and Qpid JMS producers arrive on the
// target with the same JMSExpiration in both JMS views and the same absolute-expiry-time in the
// raw AMQP view; messages without one arrive without one.
func TestMove_PreservesAbsoluteExpiry(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.expiry", 0)
	j := newJMSClient(t, ctx, env)
	var fids []string
	for _, protocol := range []string{"core", "amqp"} {
		fids = append(fids, j.produce(t, ctx, "source", protocol, "expiry", src)...)
	}
	n := len(fids)
	ttls := map[string]int64{"ttl-text": 3_600_000, "ttl-bytes": 7_200_000, "no-ttl": 0}
	before := map[string]map[string]jmsView{
		"Core JMS": j.dump(t, ctx, "source", "core", src, "browse", n),
		"Qpid JMS": j.dump(t, ctx, "source", "amqp", src, "browse", n),
	}
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)
	expiring := 0
	for view, msgs := range before {
		for fid, m := range msgs {
			ttl := ttls[strings.SplitN(fid, "-", 2)[1]]
			exp, ts := m.Fields["JMSExpiration"], m.Fields["JMSTimestamp"]
			if (ttl == 0 && exp != "0") || (ttl != 0 && exp != fmt.Sprint(mustInt(t, ts)+ttl)) {
				t.Fatalf("%s on the source: %s has JMSExpiration %s and JMSTimestamp %s, want a TTL of %d ms", view, fid, exp, ts, ttl)
			}
			if ttl != 0 && view == "Core JMS" {
				expiring++
			}
		}
	}

	e := &Engine{Setup: &core.Setup{Source: transfertest.Client(t, env, "source", false), Target: transfertest.Client(t, env, "target", false)}}
	res, err := e.Move(ctx, core.Spec{Mode: core.ModeMove, Source: core.Endpoint{Broker: "source", Queue: src}, Target: core.Endpoint{Broker: "target", Queue: tgt}})
	if err != nil {
		returnStaged(t, e, res.RunID)
		t.Fatal(err)
	}
	if res.Relayed != int64(n) || res.ExpiryKept != int64(expiring) || res.ExpiryLost != 0 {
		t.Errorf("run relayed %d (want %d), kept %d expiries (want %d), lost %d", res.Relayed, n, res.ExpiryKept, expiring, res.ExpiryLost)
	}
	after := map[string]map[string]jmsView{
		"Core JMS": j.dump(t, ctx, "target", "core", tgt, "browse", n),
		"Qpid JMS": j.dump(t, ctx, "target", "amqp", tgt, "browse", n),
	}
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)
	for _, view := range sortedKeys(before) {
		for _, fid := range fids {
			w, g := before[view][fid].Fields, after[view][fid].Fields
			if g["JMSExpiration"] != w["JMSExpiration"] {
				t.Errorf("%s: %s: JMSExpiration %s on the source, %s on the target", view, fid, w["JMSExpiration"], g["JMSExpiration"])
			}
		}
	}
	for _, fid := range fids {
		w, g := beforeRaw[fid], afterRaw[fid]
		if we, ge := transfertest.AbsoluteExpiry(w), transfertest.AbsoluteExpiry(g); we != ge {
			t.Errorf("raw AMQP: %s: absolute-expiry-time %d on the source, %d on the target", fid, we, ge)
		}
		if (transfertest.AbsoluteExpiry(w) != 0) != (g.Header != nil && g.Header.TTL > 0) {
			t.Errorf("raw AMQP: %s: header ttl %s on the source, %s on the target", fid, headerTTL(w), headerTTL(g))
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func headerTTL(m *amqp.Message) string {
	if m.Header == nil {
		return "absent"
	}
	return m.Header.TTL.String()
}

// nativeMessages are AMQP messages no JMS client writes: several data or sequence sections,
// amqp-value bodies of AMQP types, message and correlation ids that are not strings,
// application properties of AMQP-only types, custom annotations, a footer and an 11 MiB body.
// They are sent with go-amqp (not the relay's code) and checked in the raw AMQP view and by
// Qpid JMS. Symbol values are left to TestMove_FidelityOfAMQPSymbolValues.
func nativeMessages() []*amqp.Message {
	created := time.UnixMilli(1_760_000_000_123).UTC()
	uuid := amqp.UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	props := func(fid string) map[string]any {
		return map[string]any{"fid": fid, "u8": uint8(1), "u16": uint16(2), "u32": uint32(3), "u64": uint64(4),
			"i8": int8(-1), "i16": int16(-2), "i32": int32(-3), "i64": int64(-4), "f32": float32(1.5), "f64": 2.25,
			"bool": false, "ts": created, "uuid": uuid, "bin": []byte{0, 1, 0xff}, "str": "s ✓"}
	}
	return []*amqp.Message{
		{Header: &amqp.MessageHeader{Durable: true, Priority: 6},
			Properties: &amqp.MessageProperties{MessageID: uint64(4242), CorrelationID: uuid, ContentType: ptr("application/octet-stream"),
				Subject: ptr("subject"), ReplyTo: ptr("replies"), ReplyToGroupID: ptr("reply-group"), GroupID: ptr("g"),
				GroupSequence: ptr(uint32(7)), UserID: []byte("admin"), CreationTime: &created},
			ApplicationProperties: props("native-two-data-sections"), Data: [][]byte{{1, 2, 3}, {4, 5}},
			Footer: amqp.Annotations{"x-opt-footer": "f"}},
		{Properties: &amqp.MessageProperties{MessageID: uuid, CorrelationID: uint64(9)},
			ApplicationProperties: props("native-two-sequence-sections"), Sequence: [][]any{{"a", int64(1)}, {true, 2.5}}},
		{Header: &amqp.MessageHeader{Durable: true}, Properties: &amqp.MessageProperties{MessageID: []byte{0xca, 0xfe}, CorrelationID: []byte{1}},
			ApplicationProperties: props("native-value-long"), Value: int64(-5)},
		{Header: &amqp.MessageHeader{Durable: true}, ApplicationProperties: props("native-value-map"),
			Value: map[string]any{"k": uint32(1), "t": created, "nested": map[string]any{"l": []any{int8(1), "x"}}}},
		{Header: &amqp.MessageHeader{Durable: true}, ApplicationProperties: props("native-value-list"),
			Value: []any{uuid, "s", []byte{1}, int16(-2), nil, []any{uint64(1)}}},
		{Header: &amqp.MessageHeader{Durable: true}, ApplicationProperties: props("native-value-timestamp"), Value: created},
		{Header: &amqp.MessageHeader{Durable: true, Priority: 1}, Annotations: amqp.Annotations{"x-opt-custom": "kept", "x-custom-int": int64(3)},
			ApplicationProperties: props("native-annotations"), Value: "text with custom annotations"},
		{Header: &amqp.MessageHeader{Durable: true}, ApplicationProperties: props("native-large-data"), Data: [][]byte{bytes.Repeat([]byte("0123456789abcdef"), 11<<16)}},
	}
}

// TestMove_FidelityOfAMQPNativeMessages moves nativeMessages and compares them field by field
// before and after, raw and as Qpid JMS sees them.
func TestMove_FidelityOfAMQPNativeMessages(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.native", 0)
	msgs := nativeMessages()
	sendNative(t, ctx, env, src, msgs)
	n := len(msgs)
	j := newJMSClient(t, ctx, env)
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)
	beforeAMQP := j.dump(t, ctx, "source", "amqp", src, "browse", n)
	dupPrefix, err := fidelityMove(t, ctx, env, src, tgt, n)
	if err != nil {
		t.Fatal(err)
	}
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)
	afterAMQP := j.dump(t, ctx, "target", "amqp", tgt, "browse", n)
	compareRaw(t, beforeRaw, afterRaw, dupPrefix)
	jmsComparison{view: "Qpid JMS browser", src: src, tgt: tgt, dupPrefix: dupPrefix, sameMessages: true}.compare(t, beforeAMQP, afterAMQP)
	for _, m := range msgs {
		fid, _ := m.ApplicationProperties["fid"].(string)
		if d := rawDiff(m, withoutDuplicateID(t, afterRaw[fid], dupPrefix), "properties.to", "header.delivery-count"); len(d) > 0 {
			t.Errorf("raw AMQP: %s differs (as sent → target):\n\t%s", fid, strings.Join(d, "\n\t"))
		}
	}
}

// sendNative sends msgs to queue on the source broker with go-amqp, as the admin user.
func sendNative(t *testing.T, ctx context.Context, env *testenv.Env, queue string, msgs []*amqp.Message) {
	t.Helper()
	conn, err := transfertest.Client(t, env, "source", true).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	snd, err := conn.NewSender(ctx, queue+"::"+queue, artemis.SenderOptions{AllowNonDurable: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		p, err := snd.Send(ctx, m)
		if err == nil {
			err = p.Wait(ctx)
		}
		if err != nil {
			t.Fatalf("sending %v: %v", m.ApplicationProperties["fid"], err)
		}
	}
}

// sendSTOMP sends each body to queue on broker over STOMP 1.2 (the broker's all-protocols
// acceptor, its core_url port), with the headers given for it, and waits for each receipt.
func sendSTOMP(t *testing.T, ctx context.Context, env *testenv.Env, broker, queue string, headers []map[string]string) {
	t.Helper()
	u, err := url.Parse(env.Broker(t, broker).CoreURL)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		t.Fatalf("STOMP to %s: %v", u.Host, err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	r := bufio.NewReader(conn)
	frame := func(command string, h map[string]string, body string) {
		var b strings.Builder
		b.WriteString(command + "\n")
		for _, k := range sortedKeys(h) {
			b.WriteString(k + ":" + h[k] + "\n")
		}
		b.WriteString("\n" + body + "\x00")
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatalf("STOMP %s: %v", command, err)
		}
	}
	expect := func(want string) {
		reply, err := r.ReadString(0)
		if err != nil {
			t.Fatalf("STOMP: waiting for %s: %v", want, err)
		}
		if reply = strings.TrimLeft(reply, "\r\n"); !strings.HasPrefix(reply, want+"\n") {
			t.Fatalf("STOMP: want %s, got %q", want, reply)
		}
	}
	frame("CONNECT", map[string]string{"accept-version": "1.2", "host": u.Hostname(), "login": env.AdminUser, "passcode": env.AdminPassword}, "")
	expect("CONNECTED")
	for i, h := range headers {
		all := map[string]string{"destination": queue, "destination-type": "ANYCAST", "receipt": fmt.Sprint(i)}
		for k, v := range h {
			all[k] = v
		}
		frame("SEND", all, "body of "+h["fid"])
		expect("RECEIPT")
	}
	frame("DISCONNECT", nil, "")
}

// listedByFid lists a queue's messages with the broker's management listMessages (the view an
// operator has in the console), by the property fid, failing unless there are count.
func listedByFid(t *testing.T, ctx context.Context, c *artemis.Client, queue string, count int) map[string]map[string]any {
	t.Helper()
	msgs, err := c.ListMessages(ctx, queue, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, m := range msgs {
		out[fmt.Sprint(m["fid"])] = m
	}
	if len(out) != count {
		t.Fatalf("listMessages of %s on %s: %d messages, want %d", queue, c.Name(), len(out), count)
	}
	return out
}

// listDifferences lists how a message's management view (listMessages) on the target differs
// from its view on the source, leaving out what a relay of a message stored as Core is known
// to change (the resource page's "What arrives on the target" and "Known limitations"):
//   - added, by the relay: _AMQ_DUPL_ID;
//   - added, by the source broker's conversion of a Core message to AMQP for the relay: the
//     annotations x-opt-jms-msg-type, x-opt-jms-dest and x-opt-jms-reply-to (the JMS kind of
//     message and of destination), and the AMQP fields creationTime (= timestamp) and replyTo
//     (= the Core JMSReplyTo, which is gone);
//   - added, in the target's management view of any AMQP message: _AMQ_AD, the address the
//     message was sent to, which the broker keeps beside the message;
//   - gone: __AMQ_CID (the Core producer's connection id, which the conversion drops),
//     _AMQ_ROUTING_TYPE (the relay removes the routing type), type (the Core message type);
//   - changed: messageID (each broker's own), address (the target's), and userID, which the
//     view of an AMQP message writes as "ID:" + its message-id.
func listDifferences(src, tgt map[string]any) []string {
	added := map[string]bool{propDuplicateID: true, "x-opt-jms-msg-type": true, "x-opt-jms-dest": true,
		"x-opt-jms-reply-to": true, "creationTime": true, "replyTo": true, "_AMQ_AD": true}
	gone := map[string]bool{"__AMQ_CID": true, propRoutingType: true, "type": true, "JMSReplyTo": true}
	var diffs []string
	for _, k := range unionKeys(src, tgt) {
		sv, sok := src[k]
		tv, tok := tgt[k]
		switch {
		case !sok && !added[k]:
			diffs = append(diffs, fmt.Sprintf("%s: absent on the source, %v on the target", k, tv))
		case !tok && !gone[k]:
			diffs = append(diffs, fmt.Sprintf("%s: %v on the source, absent on the target", k, sv))
		case !sok || !tok || k == "messageID" || k == "address":
		case k == "userID":
			if tv != "ID:"+fmt.Sprint(sv) {
				diffs = append(diffs, fmt.Sprintf("userID: %v on the source, %v on the target", sv, tv))
			}
		case !reflect.DeepEqual(sv, tv):
			diffs = append(diffs, fmt.Sprintf("%s: %v on the source, %v on the target", k, sv, tv))
		}
	}
	if r, ok := src["JMSReplyTo"]; ok && tgt["replyTo"] != r {
		diffs = append(diffs, fmt.Sprintf("JMSReplyTo %v on the source, replyTo %v on the target", r, tgt["replyTo"]))
	}
	return diffs
}

// TestMove_CoreAndSTOMPMessagesGainNoProperty moves messages produced by Artemis's own CLI
// producer (Core JMS) and by STOMP frames (one with a reply-to given as a plain name) and
// compares each, property by property, in the management view an operator has (listMessages)
// on the source and on the target, allowing only what listDifferences documents. In
// particular: the null JMSXDeliveryCount that the source broker's Core-to-AMQP conversion adds
// to every such message does not reach the target (relayCopy drops it); the Core producer's
// connection id __AMQ_CID does not either, as the resource page says; and a Core JMS consumer
// on the target reads the plain reply-to name as queue://replies, as it says too.
func TestMove_CoreAndSTOMPMessagesGainNoProperty(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 5*time.Minute)
	src, tgt, _ := fidelityQueues(t, ctx, env, "fidelity.props", 0)
	for i := 1; i <= 2; i++ {
		env.Produce(t, "source", src, 1, "--properties", fmt.Sprintf(`[{"type":"string","key":"fid","value":"core-%d"}]`, i))
	}
	sendSTOMP(t, ctx, env, "source", src, []map[string]string{
		{"fid": "stomp-reply-to", "reply-to": "replies", "persistent": "true", "custom": "kept"},
		{"fid": "stomp-plain"},
	})
	const n = 4
	srcAdmin, tgtAdmin := transfertest.Client(t, env, "source", true), transfertest.Client(t, env, "target", true)
	before := listedByFid(t, ctx, srcAdmin, src, n)
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)
	for fid, m := range before {
		if _, ok := m["JMSXDeliveryCount"]; ok {
			t.Fatalf("%s carries JMSXDeliveryCount on the source: %v", fid, m)
		}
		// What the relay receives: the broker's conversion has added it, null.
		if v, ok := beforeRaw[fid].ApplicationProperties[propJMSXDeliveryCount]; !ok || v != nil {
			t.Errorf("%s as the relay receives it: JMSXDeliveryCount %v (present %v), want present and null, as the conversion writes it", fid, v, ok)
		}
		if _, ok := m["__AMQ_CID"]; strings.HasPrefix(fid, "core-") && !ok {
			t.Errorf("%s has no __AMQ_CID on the source: %v", fid, m)
		}
	}
	dupPrefix, err := fidelityMove(t, ctx, env, src, tgt, n)
	if err != nil {
		t.Fatal(err)
	}
	after := listedByFid(t, ctx, tgtAdmin, tgt, n)
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)
	for _, fid := range sortedKeys(before) {
		if d := listDifferences(before[fid], after[fid]); len(d) > 0 {
			t.Errorf("listMessages: %s differs (source → target):\n\t%s", fid, strings.Join(d, "\n\t"))
		}
		if _, ok := afterRaw[fid].ApplicationProperties[propJMSXDeliveryCount]; ok {
			t.Errorf("%s arrives with application property JMSXDeliveryCount", fid)
		}
		if id, _ := after[fid][propDuplicateID].(string); !strings.HasPrefix(id, dupPrefix) {
			t.Errorf("%s: duplicate id %q, want one starting with %q", fid, id, dupPrefix)
		}
	}
	j := newJMSClient(t, ctx, env)
	core := j.dump(t, ctx, "target", "core", tgt, "browse", n)
	if got := core["stomp-reply-to"].Fields["JMSReplyTo"]; got != "queue:replies" {
		t.Errorf("Core JMS view on the target: JMSReplyTo %q, want the queue replies (the resource page says so)", got)
	}
}
