package move

import (
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

// TestMove_CountsEachMessageOnceWhenTheSourceLosesAcknowledgements: the relay's connection to
// the source goes through a proxy that, mid-batch, stops passing what the relay sends (its
// acknowledgements of messages the target has confirmed), then cuts the connection. The broker
// hands those messages back to staging; the relay sends them again under the same duplicate id
// and the target drops the copies. The run must count each message once and report the copies
// sent again apart, as a broker restart that loses acknowledgements would need.
func TestMove_CountsEachMessageOnceWhenTheSourceLosesAcknowledgements(t *testing.T) {
	env := testenv.Require(t)
	ctx := transfertest.Ctx(t, 4*time.Minute)
	srcAdmin, tgtAdmin, src, tgt := transfertest.QueuePair(t, ctx, env, "counts")
	const messages = 1000
	want := transfertest.ProduceNumbered(t, ctx, srcAdmin, src, "counts", messages)
	spec := transfertest.MoveSpec(t, srcAdmin, src, tgt)

	b := env.Broker(t, "source")
	u, err := url.Parse(b.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	viaProxy, err := artemis.New(artemis.Config{Name: "source", AMQPURLs: []string{"amqp://" + proxy.Addr()}, ManagementURL: b.ManagementURL,
		Username: env.TransferUser, Password: env.TransferPassword, RequestTimeout: 70 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	// Confirmations 250 to 259 are accepted into a connection that no longer reaches the broker:
	// those messages are on the target and counted, but still staged.
	const swallowAt, cutAt = 250, 260
	var confirmed atomic.Int64
	reconnected := atomic.Bool{}
	e := &Mover{setup: &core.Setup{Source: viaProxy, Target: testenv.Client(t, env, "target", false),
		Options: core.Options{BatchSize: 100, Progress: func(p core.Progress) {
			if strings.Contains(p.Waiting, "reconnecting") {
				reconnected.Store(true)
			}
		}},
		Hooks: core.Hooks{AfterConfirm: func() {
			switch confirmed.Add(1) {
			case swallowAt:
				proxy.Swallow()
			case cutAt:
				proxy.Cut()
			}
		}}}}
	res, err := e.Move(ctx, spec)
	if err != nil {
		t.Fatalf("the run did not survive the lost acknowledgements: %v", err)
	}
	if !reconnected.Load() {
		t.Error("the run never reported reconnecting to the source")
	}
	transfertest.CheckSameSet(t, want, transfertest.ConsumeAll(t, ctx, tgtAdmin, artemis.FQQN(tgt, tgt)))
	checkNoStaging(t, ctx, srcAdmin, res.RunID)
	t.Logf("relayed %d, in all %d, resent %d (%d confirmations)", res.Relayed, res.RelayedTotal, res.Resent, confirmed.Load())
	if res.Relayed != messages || res.RelayedTotal != messages {
		t.Errorf("the run counts %d relayed (%d in all), want %d: a message sent again was counted twice", res.Relayed, res.RelayedTotal, messages)
	}
	if res.Resent < cutAt-swallowAt-1 {
		t.Errorf("the run reports %d messages sent again, want at least the %d whose acknowledgements were swallowed", res.Resent, cutAt-swallowAt-1)
	}
}
