package move

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// relayLinks are the two links of a relay: the staging receiver and the target sender.
type relayLinks struct {
	srcConn, tgtConn *artemis.Connection
	// journalConn carries the in-flight records on a connection of its own: on the receiver's
	// connection the broker's confirmation of a record would queue behind the prefetched
	// deliveries (megabytes for a two-batch window), which cost tens of milliseconds a batch.
	journalConn *artemis.Connection
	receiver    *artemis.Receiver
	sender      *artemis.Sender
	journal     *artemis.Sender // the in-flight record, on the source
}

// close drops both connections. Staged messages not yet accepted return to staging; every
// acknowledgement the relay counted is applied (Connection.Close detaches the receiver first).
func (l *relayLinks) close() {
	if l.srcConn != nil {
		_ = l.srcConn.Close()
	}
	if l.tgtConn != nil {
		_ = l.tgtConn.Close()
	}
	if l.journalConn != nil {
		_ = l.journalConn.Close()
	}
}

// openLinks connects to both brokers and attaches the receiver (on staging) and the sender (to
// the target queue's fully qualified name, the same string on every attempt, since the target's
// duplicate-id cache is kept per address string).
func (r *runner) openLinks(ctx context.Context) (*relayLinks, error) {
	l := &relayLinks{}
	var err error
	if l.srcConn, err = r.ConnectSource(ctx); err != nil {
		return nil, err
	}
	if l.tgtConn, err = r.ConnectTarget(ctx); err != nil {
		l.close()
		return nil, err
	}
	staging := StagingQueue(r.Run.RunID)
	// The staging queue admits one consumer. A process that just died may still hold it until
	// the broker notices its closed connection, so a refusal is retried for a short while
	// before the run is taken to belong to another live process.
	for deadline := time.Now().Add(r.Graces.Busy); ; {
		l.receiver, err = l.srcConn.NewReceiver(ctx, artemis.FQQN(staging, staging), r.receiverOptions())
		if err == nil || !isMaxConsumers(err) || time.Now().After(deadline) {
			break
		}
		if err := core.Sleep(ctx, 500*time.Millisecond); err != nil {
			l.close()
			return nil, err
		}
	}
	if err != nil {
		l.close()
		if isMaxConsumers(err) {
			return nil, fmt.Errorf("run %s: %w (staging queue %s already has its one consumer)", r.Run.RunID, core.ErrRunBusy, staging)
		}
		return nil, err
	}
	l.sender, err = l.tgtConn.NewSender(ctx, r.Run.Spec.Target.FQQN(), artemis.SenderOptions{MaxInFlight: min(2*r.Opts.BatchSize, artemis.MaxCredit), AllowNonDurable: true,
		Name: core.RelayLinkName(core.ModeMove, r.Run.RunID, r.Opts.BatchSize)})
	if err != nil {
		l.close()
		return nil, err
	}
	if l.journalConn, err = r.ConnectSource(ctx); err != nil {
		l.close()
		return nil, err
	}
	l.journal, err = l.journalConn.NewSender(ctx, manifestFQQN(r.Run.RunID), artemis.SenderOptions{MaxInFlight: 1})
	if err != nil {
		l.close()
		return nil, err
	}
	// Says which URL and node each (re)connection reached: after a failover, the log shows it.
	r.Progress.Note("relaying: connected to source " + core.ConnectedTo(l.srcConn) + " and target " + core.ConnectedTo(l.tgtConn))
	return l, nil
}

// isMaxConsumers recognises the broker's refusal of a consumer beyond a queue's max-consumers.
func isMaxConsumers(err error) bool { return errors.Is(err, artemis.ErrMaxConsumers) }

// receiverOptions size the staging receiver's prefetch: three batches (two in flight, the next
// arriving), and never more bytes than the in-flight limit allows. The receiver grants credit
// by the sizes of the messages it actually gets (ReceiverOptions.MaxBytes): a count fixed when
// the link opens, from the queues' average sizes, let a run whose staging had not begun
// prefetch 20 messages of 10 MiB at once (a 341 MiB peak).
func (r *runner) receiverOptions() artemis.ReceiverOptions {
	return artemis.ReceiverOptions{
		Credit:   min(3*r.Opts.BatchSize, artemis.MaxCredit),
		MaxBytes: max(r.Opts.MaxInFlightBytes/core.HeldCopies, 1),
		Selector: r.selector,
	}
}
