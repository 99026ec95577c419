package faults

// producer-racing-queue-delete: an artemis_queue without force_destroy is removed from the
// configuration and applied while a producer sends to it and, in most plans, a consumer drains
// it. The delete may go ahead or be refused, but no message the broker accepted may be lost.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// QueueDeletePoints are where a producer-racing-queue-delete plan lands its producer's burst:
// at a point of the delete's checks, where the provider (built with -tags faultpoints) holds
// the delete and signals the harness, or (anytime) wherever the running producer meets it.
var QueueDeletePoints = []string{"before-stop", "before-check", "anytime"}

// queueDeleteHold is how long the provider holds the delete at the plan's point.
const queueDeleteHold = 2 * time.Second

// QueueDeleteRace is what a producer-racing-queue-delete plan draws besides its point.
type QueueDeleteRace struct {
	// Bursts: the producer attaches a link for each burst of up to Burst messages and closes
	// it after, as a batch job would; otherwise one link stays attached throughout.
	Bursts bool `json:"bursts"`
	Burst  int  `json:"burst"`
	// Consumer: a consumer drains the queue while the producer sends, so the queue looks idle
	// to the delete's first count.
	Consumer bool `json:"consumer"`
}

func drawQueueDeleteRace(r *rand.Rand) QueueDeleteRace {
	return QueueDeleteRace{Bursts: r.IntN(4) != 0, Burst: 1 + r.IntN(50), Consumer: r.IntN(4) != 0}
}

// queueConfig is the iteration's main.tf: the queue on the target broker, as its operator
// declares it (admin credentials), or nothing once it is removed.
func (h *runner) queueConfig(queue string, declared bool) string {
	env := h.cfg.Env
	b := env.Brokers[brTarget]
	var s strings.Builder
	s.WriteString("terraform {\n  required_providers {\n    artemis = { source = \"artemis-studio/artemis\" }\n  }\n}\n\n")
	fmt.Fprintf(&s, "provider \"artemis\" {\n  brokers = {\n    target = {\n      amqp_urls      = [%q]\n      management_url = %q\n      username       = %q\n      password       = %q\n    }\n  }\n}\n",
		b.AMQPURL, b.ManagementURL, env.AdminUser, env.AdminPassword)
	if declared {
		fmt.Fprintf(&s, "\nresource \"artemis_address\" \"raced\" {\n  broker        = \"target\"\n  name          = %q\n  routing_types = [\"ANYCAST\"]\n}\n", queue)
		fmt.Fprintf(&s, "\nresource \"artemis_queue\" \"raced\" {\n  broker       = \"target\"\n  name         = %q\n  address      = artemis_address.raced.name\n  routing_type = \"ANYCAST\"\n}\n", queue)
	} else {
		// The address stays, as an operator retiring a queue of a shared address would leave it.
		fmt.Fprintf(&s, "\nresource \"artemis_address\" \"raced\" {\n  broker        = \"target\"\n  name          = %q\n  routing_types = [\"ANYCAST\"]\n}\n", queue)
	}
	return s.String()
}

// raceProducer sends the iteration's numbered messages to address::queue and records which
// ones the broker accepted.
type raceProducer struct {
	conn     *artemis.Connection
	fqqn     string
	tag      string
	count    int
	race     QueueDeleteRace
	accepted []atomic.Bool
	next     int          // the next message's number
	sent     atomic.Int64 // next, for the other goroutines
	stopped  atomic.Bool
	failures []string
}

// send sends up to n messages on a link of its own (bursts) or on s.
func (p *raceProducer) send(ctx context.Context, s *artemis.Sender, n int) error {
	if s == nil {
		var err error
		if s, err = p.conn.NewSender(ctx, p.fqqn, artemis.SenderOptions{}); err != nil {
			return err
		}
		defer s.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the outcomes are what count
	}
	type pending struct {
		seq int
		p   *artemis.PendingSend
	}
	var sent []pending
	for ; n > 0 && p.next < p.count; n-- {
		msg := &amqp.Message{Properties: &amqp.MessageProperties{MessageID: fmt.Sprintf("%s-%d", p.tag, p.next)},
			Header: &amqp.MessageHeader{Durable: true}, Data: [][]byte{harness.Body(256)}}
		ps, err := s.Send(ctx, msg)
		if err != nil {
			return err
		}
		sent = append(sent, pending{p.next, ps})
		p.next++
		p.sent.Store(int64(p.next))
	}
	var first error
	for _, ps := range sent {
		if err := ps.p.Wait(ctx); err != nil {
			first = cmpErr(first, err)
			continue
		}
		p.accepted[ps.seq].Store(true)
	}
	return first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// run sends bursts until stopped or every message is sent; a send the broker refuses (the
// queue gone) is noted and the producer goes on with the next burst.
func (p *raceProducer) run(ctx context.Context) {
	var s *artemis.Sender
	if !p.race.Bursts {
		var err error
		if s, err = p.conn.NewSender(ctx, p.fqqn, artemis.SenderOptions{}); err != nil {
			p.failures = append(p.failures, err.Error())
			return
		}
		defer s.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the outcomes are what count
	}
	for !p.stopped.Load() && p.next < p.count && ctx.Err() == nil {
		burstCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := p.send(burstCtx, s, p.race.Burst)
		cancel()
		if err != nil {
			p.failures = append(p.failures, err.Error())
			if s != nil {
				return // the link is gone with the queue
			}
		}
		sleep(ctx, 5*time.Millisecond)
	}
}

// runQueueDelete is one producer-racing-queue-delete iteration.
func (h *runner) runQueueDelete(ctx context.Context, index int, plan Plan) (it Iteration) {
	it = Iteration{Plan: plan, Index: index}
	fail := func(format string, args ...any) Iteration {
		it.Problem = fmt.Sprintf(format, args...)
		return it
	}
	tgt := h.admin[brTarget]
	queue := testenv.UniqueName("faults.del")
	it.TargetQueue = queue
	tag := fmt.Sprintf("f%d", plan.Seed)
	dir := h.iterationDir(index, plan, "")
	if err := os.RemoveAll(dir); err != nil {
		return fail("%v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail("%v", err)
	}
	writeConfig := func(declared bool) error {
		return os.WriteFile(filepath.Join(dir, "main.tf"), []byte(h.queueConfig(queue, declared)), 0o600)
	}
	ws := &harness.Workspace{Dir: dir, CLIConfig: h.cli, Terraform: h.cfg.Terraform, Log: h.cfg.TerraformLog,
		Env: []string{"TF_LOG=" + os.Getenv("FAULTS_TF_LOG"), "TF_LOG_PROVIDER="}}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = tgt.DestroyQueue(cctx, queue)
		_ = tgt.DestroyQueue(cctx, queue+".probe")
		_ = tgt.DeleteAddress(cctx, queue, true)
	}()
	applyLimit := 5 * time.Minute
	if err := writeConfig(true); err != nil {
		return fail("%v", err)
	}
	create, err := ws.StartApply(ctx, applyLimit)
	if err != nil {
		return fail("%v", err)
	}
	if err := waitApply(create); err != nil {
		return fail("creating the queue: %v: %s", err, firstErrorLine(create.Output()))
	}

	conn, err := tgt.Connect(ctx)
	if err != nil {
		return fail("connecting the producer: %v", err)
	}
	defer conn.Close()
	tally := NewTally(tag, plan.Count)
	prod := &raceProducer{conn: conn, fqqn: artemis.FQQN(queue, queue), tag: tag, count: plan.Count, race: plan.Race,
		accepted: make([]atomic.Bool, plan.Count)}
	var wg sync.WaitGroup
	raceCtx, stopRace := context.WithCancel(ctx)
	defer stopRace()
	consumed := 0
	if plan.Race.Consumer {
		wg.Add(1)
		go func() {
			defer wg.Done()
			consumed = consumeUntil(raceCtx, conn, queue, tally)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if plan.Point == "anytime" {
			prod.run(raceCtx)
		}
	}()
	if plan.Point == "anytime" && !waitFor(ctx, 30*time.Second, func() bool { n := int(prod.sent.Load()); return n >= plan.TriggerAt || n >= plan.Count }) {
		stopRace()
		wg.Wait()
		return fail("the producer sent %d of %d messages in 30 s", prod.sent.Load(), plan.TriggerAt)
	}

	// The removal: an apply of the configuration without the queue.
	if err := writeConfig(false); err != nil {
		return fail("%v", err)
	}
	signal := filepath.Join(dir, "delete-point")
	env := []string{}
	if plan.Point != "anytime" {
		env = append(env, "ARTEMIS_FAULT_QUEUE_DELETE="+plan.Point, "ARTEMIS_FAULT_SIGNAL="+signal, "ARTEMIS_FAULT_PAUSE="+queueDeleteHold.String())
	}
	start := time.Now()
	del, err := ws.StartApply(ctx, applyLimit, env...)
	if err != nil {
		return fail("%v", err)
	}
	it.Applies = 1
	if plan.Point != "anytime" {
		// The burst the provider waits for: on a link attached there, at that point.
		if waitFor(ctx, applyLimit, func() bool { _, err := os.Stat(signal); return err == nil || isDone(del) }) && !isDone(del) {
			it.Injected, it.InjectedAt = true, time.Since(start).Seconds()
			burstCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			if err := prod.send(burstCtx, nil, max(plan.Race.Burst, 1)); err != nil {
				it.Notes = append(it.Notes, "the burst at "+plan.Point+": "+err.Error())
			}
			cancel()
		}
	} else {
		it.Injected = true
	}
	delErr := waitApply(del)
	deleted := delErr == nil
	prod.stopped.Store(true)
	time.Sleep(500 * time.Millisecond)
	stopRace()
	wg.Wait()
	it.Notes = append(it.Notes, fmt.Sprintf("producer: %d sent (%s, bursts of %d), consumer: %t (%d consumed)",
		prod.next, map[bool]string{true: "a link per burst", false: "one link"}[plan.Race.Bursts], plan.Race.Burst, plan.Race.Consumer, consumed))
	if len(prod.failures) > 0 {
		it.Notes = append(it.Notes, fmt.Sprintf("%d producer sends refused, first: %s", len(prod.failures), prod.failures[0]))
	}
	var problems []string
	if deleted {
		it.Notes = append(it.Notes, "the delete went ahead")
	} else {
		it.Notes = append(it.Notes, "the delete was refused: "+firstErrorLine(del.Output()))
		if !strings.Contains(del.Output(), "Refusing to delete") {
			problems = append(problems, "the delete failed other than by refusing: "+firstErrorLine(del.Output()))
		}
	}

	checkCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if q, err := tgt.Queue(checkCtx, queue); err == nil {
		if deleted {
			it.Notes = append(it.Notes, "the queue exists again after the delete (the producer's address::queue auto-created it)")
		} else if !q.Enabled {
			problems = append(problems, "the refused delete left the queue disabled")
		}
		if _, err := drain(checkCtx, tgt, queue, tally, placeTarget); err != nil {
			return fail("checker: %v", err)
		}
	} else if !errors.Is(err, artemis.ErrNotFound) {
		return fail("checker: reading the queue: %v", err)
	}
	if err := addressTakesMessages(checkCtx, tgt, conn, queue); err != nil {
		problems = append(problems, err.Error())
	}
	// What an operator does after a refusal: the producers stopped and the queue drained (as
	// the checker did), the same removal applied again.
	if !deleted {
		again, err := ws.StartApply(ctx, applyLimit)
		if err != nil {
			return fail("%v", err)
		}
		it.Applies++
		if err := waitApply(again); err != nil {
			problems = append(problems, "the removal applied again once the queue was drained: "+firstErrorLine(again.Output()))
		}
	}
	it.Recovered = len(problems) == 0
	// The messages of the iteration are those the producer sent, not the plan's upper bound.
	it.Count = prod.next
	it.Counts = raceCounts(tally, prod)
	for _, p := range []struct {
		n    int
		what string
	}{{it.Lost, "accepted by the broker and lost"}, {it.Doubled, "doubled"}, {it.Unexpected, "unexpected"}} {
		if p.n > 0 {
			problems = append(problems, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	it.Problem = strings.Join(problems, "; ")
	it.OK = it.Problem == ""
	return it
}

// raceCounts holds the producer's accepted messages to exactly once: consumed during the race
// or drained from the queue after it. A message the broker refused that shows up anyway is
// counted as delivered, not lost.
func raceCounts(t *Tally, p *raceProducer) Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := Counts{Unexpected: t.unexpected}
	for i := 0; i < t.count; i++ {
		n := t.onTarget[i]
		switch {
		case n == 0 && p.accepted[i].Load():
			c.Lost++
		case n > 1:
			c.Doubled += n - 1
		}
		if n > 0 {
			c.Delivered++
		}
	}
	return c
}

// consumeUntil consumes the queue into the tally until ctx ends or the queue goes, and returns
// how many it took.
func consumeUntil(ctx context.Context, conn *artemis.Connection, queue string, t *Tally) int {
	r, err := conn.NewReceiver(ctx, artemis.FQQN(queue, queue), artemis.ReceiverOptions{Credit: 100})
	if err != nil {
		return 0
	}
	defer r.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection closes anyway
	n := 0
	for ctx.Err() == nil {
		msg, err := r.Receive(ctx)
		if err != nil {
			return n
		}
		if err := r.Accept(ctx, msg); err != nil {
			// Not settled: the broker keeps it, and the checker drains it.
			return n
		}
		t.add(msg, placeTarget)
		n++
	}
	return n
}

// addressTakesMessages checks that the address is not left blocked: a message sent to a queue
// of the harness's own on it is accepted within 20 s. The queue is removed after.
func addressTakesMessages(ctx context.Context, admin *artemis.Client, conn *artemis.Connection, address string) error {
	probe := address + ".probe"
	if err := admin.DeclareQueue(ctx, artemis.QueueDefinition{Name: probe, Address: address, RoutingType: "ANYCAST", Durable: true,
		MaxConsumers: -1, RingSize: -1, Enabled: true}); err != nil {
		return fmt.Errorf("checker: declaring a probe queue on %s: %w", address, err)
	}
	defer admin.DestroyQueue(context.WithoutCancel(ctx), probe) //nolint:errcheck // the iteration's clean-up tries again
	sendCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	s, err := conn.NewSender(sendCtx, artemis.FQQN(address, probe), artemis.SenderOptions{})
	if err == nil {
		var p *artemis.PendingSend
		if p, err = s.Send(sendCtx, &amqp.Message{Data: [][]byte{[]byte("unblocked?")}}); err == nil {
			err = p.Wait(sendCtx)
		}
		_ = s.Close(context.WithoutCancel(ctx))
	}
	if err != nil {
		return fmt.Errorf("the address %s takes no message after the delete (left blocked?): %w", address, err)
	}
	return nil
}

// waitFor polls cond every 50 ms until it holds (true) or limit passes (false).
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		if cond() {
			return true
		}
		if !sleep(ctx, 50*time.Millisecond) {
			return false
		}
	}
	return cond()
}

func isDone(a *harness.Apply) bool {
	select {
	case <-a.Done():
		return true
	default:
		return false
	}
}
