package copying

import (
	"errors"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// targetViaProxy points a copy's target connections through a proxy the test can stall: the
// target's answers then arrive late, as a broker busy with its journal or its pages gives them.
func targetViaProxy(t *testing.T, f *copyFixture, e *Copier) *testenv.Proxy {
	t.Helper()
	b := f.env.Broker(t, "target")
	u, err := url.Parse(b.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	viaProxy, err := artemis.New(artemis.Config{Name: "target", AMQPURLs: []string{"amqp://" + proxy.Addr()}, ManagementURL: b.ManagementURL,
		Username: f.env.TransferUser, Password: f.env.TransferPassword, RequestTimeout: 70 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.setup.Target = viaProxy
	return proxy
}

// A target that answers later than the drain timeout while the run goes on is waited for, and
// the run says so; it is not taken for a failure (a 3,000,000-message copy stopped one message
// short this way, on a target that took more than 15 s to confirm a message).
func TestCopy_WaitsForATargetThatConfirmsLate(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n, stallAt = 1000, 300
	f := newCopyFixture(t, ctx, "copylate", n, false)
	var waited atomic.Bool
	e := f.engine(t, core.Options{BatchSize: 100, Progress: func(p core.Progress) {
		if strings.Contains(p.Waiting, "has not confirmed a message") {
			waited.Store(true)
		}
	}})
	proxy := targetViaProxy(t, f, e)
	var confirmed atomic.Int32
	e.setup.Hooks.AfterConfirm = func() {
		if confirmed.Add(1) == stallAt {
			proxy.Stall(core.DrainTimeout + 5*time.Second)
		}
	}
	res, err := e.Copy(ctx, f.spec)
	if err != nil {
		t.Fatalf("the copy did not wait for the late target: %v", err)
	}
	if !waited.Load() {
		t.Error("the copy never reported waiting for the target to confirm")
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	checkCopyRun(t, ctx, f.ledger, res.RunID, n)
}

// A target that answers nothing for Graces.Confirm is taken as gone: the copy stops resumable
// saying which broker and what to check, and the next copy finishes it exactly.
func TestCopy_StopsResumableWhenTheTargetConfirmsNothingForItsGrace(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const n, stallAt = 1000, 300
	const grace = 3 * time.Second
	f := newCopyFixture(t, ctx, "copystuck", n, false)
	e := f.engine(t, core.Options{BatchSize: 100})
	e.setup.Graces.Confirm = grace
	proxy := targetViaProxy(t, f, e)
	var confirmed atomic.Int32
	e.setup.Hooks.AfterConfirm = func() {
		if confirmed.Add(1) == stallAt {
			proxy.Stall(3 * grace)
		}
	}
	_, err := e.Copy(ctx, f.spec)
	if !errors.Is(err, core.ErrInterrupted) || !strings.Contains(err.Error(), `the target broker "target" has not`) {
		t.Fatalf("the copy into a stuck target ended with %v; want it interrupted, naming the target broker", err)
	}
	t.Logf("stopped: %v", err)
	res, err := f.engine(t, core.Options{BatchSize: 100}).Copy(ctx, f.spec)
	if err != nil {
		t.Fatalf("resuming: %v", err)
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	checkCopyRun(t, ctx, f.ledger, res.RunID, n)
}
