package move

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// The JMS views of the fidelity tests: what a Core JMS and an AMQP JMS consumer see of each
// message, and how the source's view and the target's may differ.

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
