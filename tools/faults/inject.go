package faults

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// fault is an injected fault that may last: done is closed when it is over (a broker back up,
// a stall or a lock ended), and err then says what went wrong ending it.
type fault struct {
	done   chan struct{}
	err    error
	orphan int // a provider left running by a killed terraform
	note   string
}

func over() *fault {
	f := &fault{done: make(chan struct{})}
	close(f.done)
	return f
}

// lasting runs end in the background and closes done after it.
func lasting(end func() error) *fault {
	f := &fault{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.err = end()
	}()
	return f
}

// restartAfter is a fault that ends when start, after a pause of d, has brought back what the
// fault stopped (a broker, PostgreSQL).
func restartAfter(d time.Duration, what string, start func() error) *fault {
	return lasting(func() error {
		time.Sleep(d)
		if err := start(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}

// lockHolderCount is the size of the queue the management-lock holder moves back and forth:
// large enough that one move holds the lock for a good part of a second.
const lockHolderCount = 20000

// providerWait bounds the wait for terraform to start its provider.
const providerWait = 20 * time.Second

// inject starts the plan's fault. bg tracks what runs until ctx ends (the slow consumer).
func (h *runner) inject(ctx context.Context, bg *sync.WaitGroup, apply *harness.Apply, plan Plan, tgtQueue string, target *artemis.Client, tally *Tally) (*fault, error) {
	env := h.cfg.Env
	switch plan.Kind {
	case KillProvider, KillProviderCopy:
		pid, err := apply.Provider(providerWait)
		if err != nil {
			return over(), err
		}
		return over(), harness.Kill(pid)
	case KillProviderAnytime:
		// The drawn instant may come before terraform has started its provider: the kill then
		// lands as soon as it has, the earliest a provider can die.
		pid, err := apply.Provider(providerWait)
		if err != nil {
			return over(), err
		}
		return over(), harness.Kill(pid)
	case KillTerraform:
		pid, err := apply.Provider(providerWait)
		if err != nil {
			return over(), err
		}
		f := over()
		f.orphan = pid
		return f, apply.KillTerraform()
	case KillTerraformAnytime:
		// At once, whether or not a provider has been started yet.
		f := over()
		f.orphan = apply.ProviderPID()
		return f, apply.KillTerraform()
	case Interrupt:
		return over(), apply.Interrupt()
	case KillSource, KillTarget, FailoverTarget, KillSourceCopy, KillTargetCopy:
		name := map[Kind]string{KillSource: brSource, KillTarget: brTarget, FailoverTarget: brNode1,
			KillSourceCopy: brSource, KillTargetCopy: brTarget}[plan.Kind]
		if err := env.KillBroker(name); err != nil {
			return over(), err
		}
		return restartAfter(plan.Downtime, "restarting broker "+name, func() error { return env.StartBroker(name) }), nil
	case PostgresRestart:
		// A fast shutdown: the server cuts its connections, the copy's ledger writes fail.
		if err := env.StopPostgres(); err != nil {
			return over(), err
		}
		return restartAfter(plan.Downtime, "starting PostgreSQL again", env.StartPostgres), nil
	case CutSource, CutSourceCopy:
		h.proxies[brSource].Cut()
		return over(), nil
	case CutTarget, CutTargetCopy:
		h.proxies[brTarget].Cut()
		return over(), nil
	case StallSource, StallTarget, StallSourceCopy, StallTargetCopy:
		p := h.proxies[map[Kind]string{StallSource: brSource, StallTarget: brTarget,
			StallSourceCopy: brSource, StallTargetCopy: brTarget}[plan.Kind]]
		p.Stall(plan.Downtime)
		return lasting(func() error { time.Sleep(plan.Downtime); return nil }), nil
	case TargetFull:
		// Slow: the whole selection drains in about 15 s, far slower than the relay fills.
		rate := max(200, plan.Count/15)
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := slowConsumer(ctx, target, tgtQueue, rate, tally); err != nil {
				h.logf("%v", err)
			}
		}()
		f := over()
		f.note = fmt.Sprintf("slow consumer at %d messages/s", rate)
		return f, nil
	case ManagementBusy:
		if err := h.lockHolder(ctx); err != nil {
			return over(), err
		}
		src := h.admin[brSource]
		return lasting(func() error {
			end := time.Now().Add(plan.Downtime)
			from, to := h.holder, h.holder+".b"
			for time.Now().Before(end) {
				if _, err := src.MoveMessages(ctx, artemis.MoveRequest{Queue: from, TargetQueue: to}); err != nil {
					return fmt.Errorf("holding the management lock: %w", err)
				}
				from, to = to, from
			}
			return nil
		}), nil
	}
	return over(), fmt.Errorf("no injection for fault kind %q", plan.Kind)
}

// lockHolder creates, once per run, the pair of source queues the lock holder moves between.
func (h *runner) lockHolder(ctx context.Context) error {
	if h.holder != "" {
		return nil
	}
	src := h.admin[brSource]
	name := testenv.UniqueName("faults.lockholder")
	for _, q := range []string{name, name + ".b"} {
		if err := src.CreateQueue(ctx, artemis.QueueSpec{Name: q, Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
			return fmt.Errorf("creating the lock holder's queue: %w", err)
		}
	}
	h.holder = name
	if _, err := harness.Fill(ctx, src, name, lockHolderCount, 256, "lockholder"); err != nil {
		return fmt.Errorf("filling the lock holder's queue: %w", err)
	}
	return nil
}
