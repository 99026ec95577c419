package bench

import "context"

// Warming up: a fresh broker compiles its hot paths (the JIT's C2 compiler threads) for the
// first few hundred thousand messages a move sends through it. On synced brokers the source
// spent 42, 24, 18 and then 15 s of CPU on four moves of 100,000 x 1 KiB in a row; with a
// warm-up of 5,000 messages the first measured runs of ours and of terraform apply paid for
// the compiling (make bench at 216be1b: 33, 16 and 15 s for ours; 23, 21 and 16 s for apply).
const (
	// warmupMaxMoves bounds the warm-up moves of ours.
	warmupMaxMoves = 8
	// warmupSettled: the warm-up ends when a move's source CPU per message is within this
	// fraction of the move before it.
	warmupSettled = 0.10
)

// warmUp moves n x 1 KiB with our relay until the source broker's CPU per message settles
// (warmupSettled, warmupMaxMoves at most), then once with artemis transfer (its own Core paths).
// Nothing of it is measured in the results but the source CPU of each warm-up move.
func (b *bench) warmUp(ctx context.Context, n int) {
	contenders := b.contenders[:min(2, len(b.contenders))]
	b.logf("warming up the brokers: %d x 1 KiB with %s until the source's CPU per message settles, then with the others (not measured)", n, contenders[0].ID)
	prev := 0.0
	for i := range warmupMaxMoves {
		run := b.runOnce(ctx, Case{Count: n, Size: kib}, contenders[0], 0, nil)
		if ctx.Err() != nil {
			return
		}
		if !run.OK {
			b.logf("warm-up with %s failed: %s", contenders[0].ID, run.Error)
			break
		}
		perMsg := run.SourceCPU * 1e6 / float64(n)
		b.res.WarmupSourceMicros = append(b.res.WarmupSourceMicros, perMsg)
		b.logf("warm-up move %d with %s: %.0f µs/msg of source broker CPU", i+1, contenders[0].ID, perMsg)
		if prev > 0 && perMsg >= prev*(1-warmupSettled) {
			break
		}
		prev = perMsg
	}
	for _, c := range contenders[1:] {
		if run := b.runOnce(ctx, Case{Count: n, Size: kib}, c, 0, nil); !run.OK && ctx.Err() == nil {
			b.logf("warm-up with %s failed: %s", c.ID, run.Error)
		}
	}
}
