package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// testAccFactoriesWithQueueDeleteHooks serves a provider whose artemis_queue deletes stop at
// the points of h.
func testAccFactoriesWithQueueDeleteHooks(h artemis.DeleteEmptyQueueHooks) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"artemis": providerserver.NewProtocol6WithError(&artemisProvider{version: "test", queueDeleteHooks: h}),
	}
}

// addressOnlyConfig is queueConfig without its queue.
func addressOnlyConfig(env *testenv.Env, broker, address string) string {
	return testAccAdminProviderBlock(env, broker) + fmt.Sprintf(`
resource "artemis_address" "a" {
  broker        = %q
  name          = %q
  routing_types = ["ANYCAST", "MULTICAST"]
}
`, broker, address)
}

// testAccCheckQueueEnabled checks on the broker that a queue exists and is enabled.
func testAccCheckQueueEnabled(t *testing.T, env *testenv.Env, broker, queue string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		q, err := testAccAdminClient(t, env, broker).Queue(ctx, queue)
		if err != nil {
			return err
		}
		if !q.Enabled {
			return fmt.Errorf("queue %s on %s is left disabled", queue, broker)
		}
		return nil
	}
}

// sendOne sends one message to destination on a link of its own, closed once the message is
// accepted.
func sendOne(t *testing.T, env *testenv.Env, broker, destination string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := testAccAdminClient(t, env, broker).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	s, err := conn.NewSender(ctx, destination, artemis.SenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Send(ctx, &amqp.Message{Data: [][]byte{[]byte("late")}})
	if err == nil {
		err = p.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close(ctx)
}

// A message stored after the delete's first count (by a producer whose link has gone again) is
// seen by the check that follows the blocking of its address: the delete is refused and the queue kept.
func TestAccQueueResource_DestroyKeepsAMessageStoredAfterItsFirstCount(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range brokerObjectVersions {
		t.Run(broker, func(t *testing.T) {
			address := testenv.UniqueName("acc.delete.late")
			queue := address + ".q"
			var once sync.Once
			hooks := artemis.DeleteEmptyQueueHooks{BeforeStop: func() {
				once.Do(func() { sendOne(t, env, broker, artemis.FQQN(address, queue)) })
			}}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccFactoriesWithQueueDeleteHooks(hooks),
				Steps: []resource.TestStep{
					{Config: queueConfig(env, broker, address, queue, "")},
					{
						Config:      addressOnlyConfig(env, broker, address),
						ExpectError: regexp.MustCompile(`(?s)queue "` + regexp.QuoteMeta(queue) + `".*holds 1 message.*Nothing was deleted.*force_destroy = true`),
					},
					{
						Config: queueConfig(env, broker, address, queue, "  force_destroy = true"),
						Check: resource.ComposeAggregateTestCheckFunc(
							testAccCheckQueueDepth(t, env, broker, queue, 1),
							testAccCheckQueueEnabled(t, env, broker, queue),
						),
					},
				},
			})
		})
	}
}

// racingProducer sends to an address on one link, a message at a time, each accepted before
// the next, while a consumer drains the queue, so that the queue is mostly empty: what a delete
// that counts and then destroys gets wrong.
type racingProducer struct {
	accepted, consumed atomic.Int64
	// stopSending ends the producer between two messages; stopConsuming ends the consumer's
	// wait for the next one. A message sent or accepted is always waited for, so the counts
	// are exact.
	stopSending, stopConsuming context.CancelFunc
	sent, drained              sync.WaitGroup
	closeConn                  func()
	err                        atomic.Value // error
}

// maxRacingMessages bounds the producer; it stops well before in these tests.
const maxRacingMessages = 20000

func startRacingProducer(t *testing.T, env *testenv.Env, broker, address, queue string) *racingProducer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	sending, stopSending := context.WithCancel(ctx)
	consuming, stopConsuming := context.WithCancel(ctx)
	p := &racingProducer{stopSending: stopSending, stopConsuming: stopConsuming}
	conn, err := testAccAdminClient(t, env, broker).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.closeConn = sync.OnceFunc(func() { _ = conn.Close() })
	t.Cleanup(func() { p.halt(); cancel() })
	s, err := conn.NewSender(ctx, address, artemis.SenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := conn.NewReceiver(ctx, artemis.FQQN(address, queue), artemis.ReceiverOptions{Credit: 10})
	if err != nil {
		t.Fatal(err)
	}
	p.sent.Add(1)
	p.drained.Add(1)
	go func() {
		defer p.sent.Done()
		defer func() { _ = s.Close(context.Background()) }()
		for i := 0; i < maxRacingMessages && sending.Err() == nil; i++ {
			pending, err := s.Send(ctx, &amqp.Message{Data: [][]byte{fmt.Appendf(nil, "racing %d", i)}})
			if err == nil {
				err = pending.Wait(ctx)
			}
			if err != nil {
				p.err.Store(err)
				return
			}
			p.accepted.Add(1)
			// Paced so that the consumer keeps the queue empty between two messages.
			select {
			case <-sending.Done():
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	go func() {
		defer p.drained.Done()
		for {
			msg, err := r.Receive(consuming)
			if err != nil {
				return
			}
			if err := r.Accept(ctx, msg); err != nil {
				return
			}
			p.consumed.Add(1)
		}
	}()
	deadline := time.Now().Add(time.Minute)
	for p.accepted.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p.accepted.Load() < 20 {
		t.Fatal("the racing producer got fewer than 20 messages accepted in a minute")
	}
	return p
}

// halt stops the producer once its last message is settled, then the consumer, and closes
// their connection; what the consumer had not accepted goes back to the queue.
func (p *racingProducer) halt() {
	p.stopSending()
	p.sent.Wait()
	p.stopConsuming()
	p.drained.Wait()
	p.closeConn()
}

// checkNoneLost checks, once the producer has stopped, that every message the broker accepted
// was consumed or is still in the queue.
func (p *racingProducer) checkNoneLost(t *testing.T, env *testenv.Env, broker, queue string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if err, _ := p.err.Load().(error); err != nil {
			return fmt.Errorf("the racing producer failed: %w", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		depth, err := testAccAdminClient(t, env, broker).QueueDepth(ctx, queue)
		if errors.Is(err, artemis.ErrNotFound) {
			depth, err = 0, nil
		}
		if err != nil {
			return err
		}
		accepted, consumed := p.accepted.Load(), p.consumed.Load()
		if lost := accepted - consumed - depth; lost != 0 {
			return fmt.Errorf("%d messages accepted, %d consumed, %d in the queue: %d lost", accepted, consumed, depth, lost)
		}
		return nil
	}
}

// A destroy while a producer keeps sending to the queue's address is refused, with the queue
// kept enabled and every message accepted either consumed or still in it.
func TestAccQueueResource_DestroyWithAProducerRacingLosesNothing(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range brokerObjectVersions {
		t.Run(broker, func(t *testing.T) {
			address := testenv.UniqueName("acc.delete.race")
			queue := address + ".q"
			var producer *racingProducer
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: queueConfig(env, broker, address, queue, "")},
					{
						PreConfig:   func() { producer = startRacingProducer(t, env, broker, address, queue) },
						Config:      addressOnlyConfig(env, broker, address),
						ExpectError: regexp.MustCompile(`(?s)queue "` + regexp.QuoteMeta(queue) + `".*producer\(s\) attached.*Nothing was deleted.*Stop the producers.*force_destroy = true`),
					},
					{
						PreConfig: func() { producer.halt() },
						Config:    queueConfig(env, broker, address, queue, "  force_destroy = true"),
						Check: resource.ComposeAggregateTestCheckFunc(
							testAccCheckQueueEnabled(t, env, broker, queue),
							func(s *terraform.State) error { return producer.checkNoneLost(t, env, broker, queue)(s) },
						),
					},
				},
			})
		})
	}
}
