package artemis_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
)

// TestHeap_ReadsTheTargetBrokersHeap reads the JVM heap and the global paging limit as the
// transfer user.
func TestHeap_ReadsTheTargetBrokersHeap(t *testing.T) {
	env := testenv.Require(t)
	ctx := testContext(t, 30*time.Second)
	c := testenv.Client(t, env, "target", false)
	h, err := c.Heap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Max <= 0 || h.Used <= 0 || h.Used > h.Max {
		t.Fatalf("heap %+v: want 0 < used <= max", h)
	}
	g, err := c.GlobalMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Artemis's default global-max-size is half the heap.
	if g.MaxSize <= 0 || g.MaxSize > h.Max || g.Used < 0 {
		t.Fatalf("global memory %+v with heap %+v: want 0 < global-max-size <= heap max", g, h)
	}
}

// TestHeap_MeasurePageTransactionCost measures what a message sent with a duplicate id to a
// paging address keeps on the broker's heap until it is consumed: the slope of the heap after a
// full GC over the number of such messages. A measurement, not a test: it runs only with
// ARTEMIS_MEASURE_HEAP=1 and logs its figures.
func TestHeap_MeasurePageTransactionCost(t *testing.T) {
	if os.Getenv("ARTEMIS_MEASURE_HEAP") != "1" {
		t.Skip("a measurement: set ARTEMIS_MEASURE_HEAP=1 to run it")
	}
	env := testenv.Require(t)
	ctx := testContext(t, 20*time.Minute)
	admin := testenv.Client(t, env, "target", true)
	for _, withID := range []bool{true, false} {
		q := testenv.UniqueName("heapcost")
		testenv.FixtureQueue(t, ctx, admin, q)
		if err := admin.AddAddressSettings(ctx, q, map[string]any{"addressFullMessagePolicy": "PAGE", "maxSizeBytes": 1 << 20, "pageSizeBytes": 512 << 10}); err != nil {
			t.Fatal(err)
		}
		afterGC := func() int64 {
			// The broker's management.xml grants no exec on java.lang, not even to the admin:
			// the JVM's own tool runs the full GC instead.
			pid, err := os.ReadFile(filepath.Join(env.StateDir, "brokers", "target.pid"))
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if out, err := exec.CommandContext(ctx, "jcmd", strings.TrimSpace(string(pid)), "GC.run").CombinedOutput(); err != nil {
					t.Fatalf("jcmd GC.run: %v: %s", err, out)
				}
				time.Sleep(time.Second)
			}
			var u struct{ Used int64 }
			raw := testenv.AdminJolokia(t, env, "target", map[string]any{"type": "read", "mbean": "java.lang:type=Memory", "attribute": "HeapMemoryUsage"})
			if err := json.Unmarshal(raw, &u); err != nil {
				t.Fatal(err)
			}
			return u.Used
		}
		base := afterGC()
		sent := 0
		prev, prevSent := base, 0
		for _, step := range []int{40_000, 100_000, 100_000, 100_000} {
			start := sent
			transfertest.Produce(t, ctx, admin, q, step, func(i int) *amqp.Message {
				m := &amqp.Message{Header: &amqp.MessageHeader{Durable: true},
					Properties: &amqp.MessageProperties{MessageID: fmt.Sprintf("m-%d", start+i)},
					Data:       [][]byte{bytes.Repeat([]byte{'x'}, 1024)}}
				if withID {
					// As long as the relay's own ids: "studio:<run id>:<node id>:<message id>".
					m.ApplicationProperties = map[string]any{"_AMQ_DUPL_ID": fmt.Sprintf("studio:%s:0d1f1e2a-5b6c-11ef-9a9a-0242ac120002:%d", q, start+i)}
				}
				return m
			})
			sent += step
			used := afterGC()
			u, err := admin.AddressUsage(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("duplicate ids %t: %d messages on a paging address (paging %t): heap after GC %d bytes, %d bytes a message over the base, %d a message since the last step",
				withID, sent, u.Paging, used, (used-base)/int64(sent), (used-prev)/int64(sent-prevSent))
			prev, prevSent = used, sent
		}
		if err := admin.DestroyQueue(ctx, q); err != nil {
			t.Log(err)
		}
		_ = admin.RemoveAddressSettings(ctx, q)
	}
}
