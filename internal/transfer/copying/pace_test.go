package copying

import (
	"sync"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// A copy keeps to the cap too: its sends pass the same pacer. Only the upper bounds are asserted
// here: a copy's pace is also bounded by the AMQP browse of the source, so a rate under the cap
// says nothing about the pacer (the front's capped move shows the cap being reached).
func TestCopy_KeepsToMaxMessagesPerSecond(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	const messages, limit = 1500, 500.0
	f := newCopyFixture(t, ctx, "copy.capped", messages, false)
	var mu sync.Mutex
	var sends []time.Time
	e := f.engine(t, core.Options{MaxMessagesPerSecond: limit})
	// As the admin user: this test is about the pace, and an environment started before the
	// transfer user could browse any queue (testenv.sh) still runs it.
	e.setup.Source, e.setup.Target = f.srcAdmin, f.tgtAdmin
	res, err := e.copy(ctx, f.spec, core.Hooks{BeforeSend: func() {
		mu.Lock()
		sends = append(sends, time.Now())
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Relayed != messages {
		t.Errorf("result %+v", res)
	}
	transfertest.CheckSameSet(t, f.want, transfertest.ConsumeAll(t, ctx, f.tgtAdmin, artemis.FQQN(f.tgt, f.tgt)))
	mu.Lock()
	defer mu.Unlock()
	m, burst := transfertest.Measure(sends, time.Time{}), limit*core.PacerBurst
	t.Logf("copy sends: %s", m)
	if float64(m.Peak1s) > limit+burst+1 {
		t.Errorf("%d messages were sent within one second; the cap of %.0f allows %.0f", m.Peak1s, limit, limit+burst)
	}
	if allowed := limit*m.Span.Seconds() + burst + 1; float64(m.N) > allowed {
		t.Errorf("%d messages were sent in %s; the cap of %.0f allows %.0f", m.N, m.Span, limit, allowed)
	}
}
