package core

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// pacer holds the relay's sends at or under Options.MaxMessagesPerSecond: a token bucket
// (golang.org/x/time/rate) that fills at the cap up to a small burst, one token per message. In
// any t seconds at most burst + cap*t messages leave, and a send that oversleeps its timer is
// made up by the tokens that accrued meanwhile, so the average holds on a busy machine too.
type pacer struct {
	limiter *rate.Limiter
	sleep   func(context.Context, time.Duration) error
}

// PacerBurst is how much of a second's worth of messages may leave at once (rounded down, at
// least one): small, so that no second sees more than a tenth over the cap, and enough to make
// up for a pause of the relay (a journal write, a busy machine) of up to a tenth of a second.
const PacerBurst = 0.1

// newPacer returns the pacer of a cap of perSecond messages a second; nil (no pacing) for none.
func newPacer(perSecond float64) *pacer {
	if perSecond <= 0 {
		return nil
	}
	burst := max(1, int(perSecond*PacerBurst))
	return &pacer{limiter: rate.NewLimiter(rate.Limit(perSecond), burst), sleep: Sleep}
}

// pacedBatchSize is the largest batch under a cap of perSecond: half a second's worth, so that a
// batch's confirmations and journal record follow the pace instead of arriving as a burst.
func pacedBatchSize(perSecond float64) int {
	return max(1, int(perSecond/2))
}

// wait returns when the next message may be sent, or when ctx ends. A nil pacer never waits.
// It reserves and sleeps rather than calling Limiter.Wait, which refuses at once a wait that
// would outlast ctx's deadline: a run's sends end on ctx's own error, as every other wait does.
func (p *pacer) wait(ctx context.Context) error {
	if p == nil {
		return nil
	}
	d := p.reserve(time.Now())
	if d <= 0 {
		return nil
	}
	return p.sleep(ctx, d)
}

// reserve takes the token of one message at now and returns how long to wait until it is due.
// The bucket may go below zero: each waiting message has reserved its place in the pace.
func (p *pacer) reserve(now time.Time) time.Duration {
	return p.limiter.ReserveN(now, 1).DelayFrom(now)
}
