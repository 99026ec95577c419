package artemis_test

import (
	"context"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// TestQueueProducers_NamesAnAMQPSenderByItsLinkName: the broker's producer list shows an AMQP
// sender under the link name it attached with, on 2.40 and 2.31 alike.
func TestQueueProducers_NamesAnAMQPSenderByItsLinkName(t *testing.T) {
	env := testenv.Require(t)
	for _, broker := range []string{"source", "legacy"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		admin := testenv.Client(t, env, broker, true)
		queue := testenv.UniqueName("mgmt.producer.name")
		testenv.FixtureQueue(t, ctx, admin, queue)
		conn, err := admin.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		name := "studio-relay/test/" + queue
		s, err := conn.NewSender(ctx, artemis.FQQN(queue, queue), artemis.SenderOptions{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		producers, err := admin.QueueProducers(ctx, queue, queue)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", broker, producers)
		if len(producers) != 1 || producers[0].Name != name {
			t.Errorf("%s: producers %+v; want one named %q", broker, producers, name)
		}
	}
}
