package core

import (
	"context"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// TestCanary_ProvesDeliveryIntoAQueueOfTheTargetsRoutingType runs the duplicate-detection
// canary on real brokers (2.40, and the legacy broker's version) into a canary queue of each
// routing type: each stores one copy of the two, so the target takes what the relay sends
// there and drops a repeated duplicate id. Sent as the relay sent it before it named the target
// queue's routing type, the same canary message is stored by no multicast queue: the canary's
// JMS mark of the other kind is what made every relayed Core message vanish there, so a broker
// that routed by that mark despite the relay's routing type would show as DedupDiscarded.
func TestCanary_ProvesDeliveryIntoAQueueOfTheTargetsRoutingType(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, broker := range []string{"target", "legacy"} {
		e := &Setup{Target: testenv.Client(t, env, broker, false)}
		for _, routing := range []Routing{RoutingAnycast, RoutingMulticast} {
			probe := e.probeDuplicateDetection(ctx, CanaryName(), routing)
			if probe.Outcome != preflight.DedupWorks || probe.Routing != routing.String() {
				t.Errorf("%s, %s canary: %+v; want DedupWorks", broker, routing, probe)
			}
		}
		admin := testenv.Client(t, env, broker, true)
		name := CanaryName()
		testenv.CreateQueue(t, ctx, admin, artemis.QueueSpec{Name: name, RoutingType: "MULTICAST", Durable: true, RingSize: -1, MaxConsumers: -1})
		unrouted := canaryMessage(name, RoutingMulticast)
		delete(unrouted.Annotations, annRoutingType)
		conn, err := admin.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, err := conn.NewSender(ctx, artemis.FQQN(name, name), artemis.SenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Send(ctx, unrouted)
		if err == nil {
			err = p.Wait(ctx)
		}
		conn.Close()
		if err != nil {
			t.Fatalf("%s: sending the canary without its routing type: %v", broker, err)
		}
		q, err := admin.Queue(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if q.MessageCount != 0 || q.MessagesAdded != 0 {
			t.Errorf("%s: a multicast queue took the canary sent without its routing type (%d messages, %d added); the canary no longer shows a discard",
				broker, q.MessageCount, q.MessagesAdded)
		}
	}
}
