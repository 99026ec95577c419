package copying

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// What the copy tests share: a Bookkeeper that records copies, a fixture of a source and a
// target queue with a ledger, and checks of the source and of a finished run.

// testBook is the tests' Bookkeeper over a ledger (transfertest.Book) with what a copy records
// there, as the engine's own ledger book records it.
type testBook struct{ *transfertest.Book }

var _ copyLedger = testBook{}

func (b testBook) copies() copyLedger {
	return ledgerBook{core.LedgerBook{Ledger: b.Ledger, By: ledger.Creator{}}}
}

func (b testBook) RecordCopied(ctx context.Context, runID, holder string, ids []int64) error {
	return b.copies().RecordCopied(ctx, runID, holder, ids)
}

func (b testBook) CopiedAmong(ctx context.Context, runID string, ids []int64) (map[int64]bool, error) {
	return b.copies().CopiedAmong(ctx, runID, ids)
}

func (b testBook) UnfinishedCopies(ctx context.Context, specKey string) ([]CopyRun, error) {
	return b.copies().UnfinishedCopies(ctx, specKey)
}

func (b testBook) ReadCopyRun(ctx context.Context, runID string) (CopyRun, error) {
	return b.copies().ReadCopyRun(ctx, runID)
}

// copyFixture is a source queue of numbered messages, an empty target queue, a ledger of its
// own and a copy spec between them.
type copyFixture struct {
	env                *testenv.Env
	srcAdmin, tgtAdmin *artemis.Client
	src, tgt           string
	spec               core.Spec
	want               []string
	ledger             *ledger.Ledger
	dsn                string
}

// newCopyFixture makes a fixture of n messages; paged puts the source address in paging from
// its first megabyte, so that a copy walks paged messages.
func newCopyFixture(t *testing.T, ctx context.Context, name string, n int, paged bool) *copyFixture {
	t.Helper()
	env := testenv.Require(t)
	f := &copyFixture{env: env, srcAdmin: testenv.Client(t, env, "source", true), tgtAdmin: testenv.Client(t, env, "target", true)}
	f.dsn = transfertest.LedgerDSN(t, env)
	f.ledger = testenv.OpenLedger(t, f.dsn)
	f.src, f.tgt = testenv.UniqueName(name+".src"), testenv.UniqueName(name+".tgt")
	if paged {
		if err := f.srcAdmin.AddAddressSettings(ctx, f.src, map[string]any{"addressFullMessagePolicy": "PAGE",
			"maxSizeBytes": int64(1 << 20), "pageSizeBytes": int64(256 << 10)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.srcAdmin.RemoveAddressSettings(context.Background(), f.src) })
	}
	testenv.FixtureQueue(t, ctx, f.srcAdmin, f.src)
	testenv.FixtureQueue(t, ctx, f.tgtAdmin, f.tgt)
	if n > 0 {
		f.want = transfertest.ProduceNumbered(t, ctx, f.srcAdmin, f.src, name, n)
	}
	f.spec = core.Spec{Mode: core.ModeCopy, Source: core.Endpoint{Broker: "source", Queue: f.src}, Target: core.Endpoint{Broker: "target", Queue: f.tgt}}
	return f
}

func (f *copyFixture) engine(t *testing.T, opts core.Options) *Copier {
	if opts.BatchSize == 0 {
		opts.BatchSize = 200
	}
	if opts.CopyIdleTimeout == 0 {
		opts.CopyIdleTimeout = 5 * time.Second
	}
	return &Copier{setup: &core.Setup{Source: testenv.Client(t, f.env, "source", false), Target: testenv.Client(t, f.env, "target", false),
		Options: opts, Bookkeeper: testBook{&transfertest.Book{Ledger: f.ledger}}}}
}

// sourceSnapshot browses a queue in its order: each message's id and delivery count as the
// browse shows them (the AMQP header's delivery-count).
func sourceSnapshot(t *testing.T, ctx context.Context, c *artemis.Client, queue string) []string {
	t.Helper()
	var out []string
	for _, msg := range transfertest.BrowseAll(t, ctx, c, queue) {
		dc := uint32(0)
		if msg.Header != nil {
			dc = msg.Header.DeliveryCount
		}
		out = append(out, fmt.Sprintf("%s/%d", transfertest.MessageIDOf(msg), dc))
	}
	return out
}

// checkSameSnapshot fails unless two snapshots hold the same messages in the same order with
// the same delivery counts.
func checkSameSnapshot(t *testing.T, before, after []string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("the source held %d messages before the copy and %d after", len(before), len(after))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("source message %d was %s before the copy and is %s after (id/delivery count)", i, before[i], after[i])
		}
	}
}

// checkCopyRun checks that a copy run is completed with copied messages recorded in the
// ledger, and that nobody holds its lease.
func checkCopyRun(t *testing.T, ctx context.Context, l *ledger.Ledger, runID string, copied int64) {
	t.Helper()
	run, err := l.GetRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != ledger.StatusCompleted || run.Mode != ledger.ModeCopy {
		t.Errorf("run %s is a %s run, status %s; want a completed copy", runID, run.Mode, run.Status)
	}
	if run.Counters.Relayed != copied {
		t.Errorf("run %s records %d copied, want %d", runID, run.Counters.Relayed, copied)
	}
	if run.Lease != nil {
		t.Errorf("lease of %s still held by %s after the run ended", runID, run.Lease.Holder)
	}
}

// copyPlan tells a copy child what to run and where to die.
type copyPlan struct {
	Spec  core.Spec `json:"spec"`
	DSN   string    `json:"dsn"`
	RunID string    `json:"run_id,omitempty"` // resume this run (resumeCopyByID) rather than Copy
	Batch int       `json:"batch"`
	// Point: send (before a send: earlier sends of the batch unconfirmed), confirm (after the
	// target confirmed a message, before the batch is recorded), record (right after a batch
	// was recorded in the ledger), none.
	Point string `json:"point"`
	At    int64  `json:"at"` // the how-manyth event of that kind
	// Pause holds the first send that long: the lease is held meanwhile.
	Pause time.Duration `json:"pause"`
}

// copyChildResult is what a child that was not killed reports.
type copyChildResult struct {
	Result core.Result `json:"result"`
	Err    string      `json:"err"`
	// PeakRSSKiB is the child's own peak resident memory (VmHWM).
	PeakRSSKiB int64 `json:"peak_rss_kib"`
}

// runCopyChild runs a copy child to its end and returns what it reported; a child that was
// killed reports Err "killed".
func runCopyChild(t *testing.T, plan copyPlan) copyChildResult {
	t.Helper()
	raw, _ := json.Marshal(plan)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCopyChildProcess$", "-test.v")
	cmd.Env = append(os.Environ(), copyChildPlanEnv+"="+string(raw))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return copyChildResult{Err: "killed"}
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, copyChildResultPrefix); ok {
			var res copyChildResult
			if jerr := json.Unmarshal([]byte(v), &res); jerr == nil {
				return res
			}
		}
	}
	t.Fatalf("copy child: %v\n%s", err, out.String())
	return copyChildResult{}
}

// A copy child is this test binary, re-run on TestCopyChildProcess alone with a plan in its
// environment: it runs a copy (or resumes one) and kills itself with SIGKILL where the plan
// says, or reports how the copy ended on its standard output.
const copyChildPlanEnv = "TRANSFER_COPY_CHILD_PLAN"

const copyChildResultPrefix = "copy-child-result: "
