package transfer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
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
)

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
	all := append([]string{"-Dfile.encoding=UTF-8", "-Dstdout.encoding=UTF-8", "-cp", j.classes + string(filepath.ListSeparator) + j.libs(),
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

// produce sends a message set of Fidelity.java to queue and returns the fids it sent.
func (j *jmsClient) produce(t *testing.T, ctx context.Context, broker, protocol, queue, set string) []string {
	t.Helper()
	return j.run(t, ctx, broker, protocol, "produce", queue, set)
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
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", k, short(w), short(g)))
		}
	}
	for _, k := range unionKeys(want.Properties, got.Properties) {
		w, wok := want.Properties[k]
		g, gok := got.Properties[k]
		switch {
		case !gok:
			diffs = append(diffs, fmt.Sprintf("property %s: %s → missing", k, short(w)))
		case !wok:
			diffs = append(diffs, fmt.Sprintf("property %s: missing → %s", k, short(g)))
		case w != g:
			diffs = append(diffs, fmt.Sprintf("property %s: %s → %s", k, short(w), short(g)))
		}
	}
	return diffs
}

// relayedView checks and removes from a view of a relayed message what the relay adds on
// purpose: the duplicate-detection id of the run (an application property the target broker
// keeps). A JMS destination naming the consumed queue is written as "queue:<consumed>", so that
// views of different queues compare.
func relayedView(t *testing.T, v jmsView, queue, dupPrefix string) jmsView {
	t.Helper()
	out := jmsView{Fields: copyMap(v.Fields), Properties: copyMap(v.Properties)}
	if dupPrefix != "" {
		if id := out.Properties[propDuplicateID]; !strings.HasPrefix(id, "String:"+dupPrefix) {
			t.Errorf("%s: duplicate id %q, want one starting with %q", v.Fields["fid"], id, dupPrefix)
		}
		delete(out.Properties, propDuplicateID)
	}
	if out.Fields["JMSDestination"] == "queue:"+queue {
		out.Fields["JMSDestination"] = "queue:<consumed>"
	}
	return out
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

func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// compareJMS fails for every message of want whose view in got differs, after removing the
// fields in ignore.
func compareJMS(t *testing.T, view string, want, got map[string]jmsView, ignore ...string) {
	t.Helper()
	for _, fid := range unionKeys(want, got) {
		w, wok := want[fid]
		g, gok := got[fid]
		if !wok || !gok {
			t.Errorf("%s: message %s is on one side only (before %v, after %v)", view, fid, wok, gok)
			continue
		}
		for _, f := range ignore {
			delete(w.Fields, f)
			delete(g.Fields, f)
		}
		if d := jmsDiff(w, g); len(d) > 0 {
			t.Errorf("%s: %s differs:\n\t%s", view, fid, strings.Join(d, "\n\t"))
		}
	}
}

// browseRaw returns the messages of a queue as AMQP delivers them, by fid.
func browseRaw(t *testing.T, ctx context.Context, env *testenv.Env, broker, queue string, count int) map[string]*amqp.Message {
	t.Helper()
	conn, err := testClient(t, env, broker, true).Connect(ctx)
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
		if !skipped[field] && !reflect.DeepEqual(w, g) {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", field, describe(w), describe(g)))
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

func annotationMap(a amqp.Annotations) map[string]any {
	m := make(map[string]any, len(a))
	for k, v := range a {
		m[fmt.Sprint(k)] = v
	}
	return m
}

// describe prints a value with its Go type; long byte slices as length and hash.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "absent"
	case []byte:
		if len(x) > 64 {
			return fmt.Sprintf("[]byte(len %d, sha256 %x)", len(x), sha256.Sum256(x))
		}
	case [][]byte:
		parts := make([]string, len(x))
		for i, d := range x {
			parts[i] = describe(d)
		}
		return "data[" + strings.Join(parts, ", ") + "]"
	case *string:
		if x == nil {
			return "absent"
		}
		return fmt.Sprintf("%q", *x)
	case *uint32:
		if x == nil {
			return "absent"
		}
		return fmt.Sprint(*x)
	case *time.Time:
		if x == nil {
			return "absent"
		}
		return x.UTC().Format(time.RFC3339Nano)
	}
	return short(fmt.Sprintf("%T(%v)", v, v))
}

// compareRaw fails for every message of want whose raw AMQP form in got differs.
func compareRaw(t *testing.T, want, got map[string]*amqp.Message, dupPrefix string, skip ...string) {
	t.Helper()
	for _, fid := range unionKeys(want, got) {
		w, wok := want[fid]
		g, gok := got[fid]
		if !wok || !gok {
			t.Errorf("raw AMQP: message %s is on one side only (before %v, after %v)", fid, wok, gok)
			continue
		}
		g = withoutDuplicateID(t, g, dupPrefix)
		if d := rawDiff(w, g, skip...); len(d) > 0 {
			t.Errorf("raw AMQP: %s differs:\n\t%s", fid, strings.Join(d, "\n\t"))
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
// transfer user and returns the prefix of the duplicate ids the run gives its messages.
func fidelityMove(t *testing.T, ctx context.Context, env *testenv.Env, src, tgt string, want int) string {
	t.Helper()
	info, err := testClient(t, env, "source", true).BrokerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Source: testClient(t, env, "source", false), Target: testClient(t, env, "target", false)}
	start := time.Now()
	res, err := e.Move(ctx, Spec{Mode: ModeMove, Source: Endpoint{Broker: "source", Queue: src}, Target: Endpoint{Broker: "target", Queue: tgt}})
	if err != nil {
		returnStaged(t, e, res.RunID)
		t.Fatal(err)
	}
	t.Logf("moved %d messages in %s", res.Relayed, time.Since(start).Round(time.Millisecond))
	if res.Staged != int64(want) || res.Relayed != int64(want) {
		t.Errorf("run staged %d and relayed %d messages, want %d", res.Staged, res.Relayed, want)
	}
	return strings.TrimSuffix(DuplicateID(res.RunID, info.NodeID, 0), "0")
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

// TestMove_FidelityOfJMSMessagesFromCoreAndAMQPClients moves messages of every JMS type,
// produced by Artemis's Core JMS client and by Qpid JMS over AMQP, with typed properties,
// priorities, both delivery modes, correlation ids, reply-to, JMSType, groups, user ids, a TTL
// and a 10 MiB body, and checks that the target holds them field by field as the source did.
//
// Views compared, before the move on the source and after it on the target (browsing): Core
// JMS, AMQP JMS and raw AMQP, every field including JMSMessageID and JMSTimestamp. Then a Core
// JMS consumer of a never-moved control copy on the source and one of the target must receive
// the same (JMSMessageID and JMSTimestamp aside: the control copy was produced separately).
// Expiry is left to TestMove_PreservesAbsoluteExpiry.
func TestMove_FidelityOfJMSMessagesFromCoreAndAMQPClients(t *testing.T) {
	env := testenv.Require(t)
	ctx := testCtx(t, 10*time.Minute)
	start := time.Now()
	srcAdmin, tgtAdmin := testClient(t, env, "source", true), testClient(t, env, "target", true)
	src, control, tgt := testenv.UniqueName("fidelity.src"), testenv.UniqueName("fidelity.control"), testenv.UniqueName("fidelity.tgt")
	fixtureQueue(t, ctx, srcAdmin, src)
	fixtureQueue(t, ctx, srcAdmin, control)
	fixtureQueue(t, ctx, tgtAdmin, tgt)
	j := newJMSClient(t, ctx, env)

	var fids []string
	for _, protocol := range []string{"core", "amqp"} {
		fids = append(fids, j.produce(t, ctx, "source", protocol, src, "fidelity")...)
		j.produce(t, ctx, "source", protocol, control, "fidelity")
	}
	n := len(fids)
	t.Logf("produced %d messages twice: %s", n, strings.Join(fids, " "))

	beforeCore := j.dump(t, ctx, "source", "core", src, "browse", n)
	beforeAMQP := j.dump(t, ctx, "source", "amqp", src, "browse", n)
	beforeRaw := browseRaw(t, ctx, env, "source", src, n)

	dupPrefix := fidelityMove(t, ctx, env, src, tgt, n)

	afterCore := j.dump(t, ctx, "target", "core", tgt, "browse", n)
	afterAMQP := j.dump(t, ctx, "target", "amqp", tgt, "browse", n)
	afterRaw := browseRaw(t, ctx, env, "target", tgt, n)

	compareJMS(t, "Core JMS browse", normalize(t, beforeCore, src, ""), normalize(t, afterCore, tgt, dupPrefix), "JMSExpiration")
	compareJMS(t, "AMQP JMS browse", normalize(t, beforeAMQP, src, ""), normalize(t, afterAMQP, tgt, dupPrefix), "JMSExpiration")
	compareRaw(t, beforeRaw, afterRaw, dupPrefix, "header.ttl", "properties.absolute-expiry-time")

	controlCore := j.dump(t, ctx, "source", "core", control, "consume", n)
	targetCore := j.dump(t, ctx, "target", "core", tgt, "consume", n)
	compareJMS(t, "Core JMS consumer, control vs target", normalize(t, controlCore, control, ""), normalize(t, targetCore, tgt, dupPrefix),
		"JMSExpiration", "JMSMessageID", "JMSTimestamp", "NATIVE_MESSAGE_ID")
	t.Logf("fidelity of %d messages checked in %s", n, time.Since(start).Round(time.Millisecond))
}

func normalize(t *testing.T, views map[string]jmsView, queue, dupPrefix string) map[string]jmsView {
	t.Helper()
	out := make(map[string]jmsView, len(views))
	for fid, v := range views {
		out[fid] = relayedView(t, v, queue, dupPrefix)
	}
	return out
}
