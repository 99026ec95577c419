package artemis_test

import (
	"errors"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// Under a snapshot context the facts of many queues come from one read of every queue, the
// same facts a read of each gives, and a queue the snapshot does not hold is not found; a queue
// the client itself creates is seen at once, and a read without the context is always fresh.
func TestQueue_SnapshotReadsAnswerManyQueuesFromOneRequest(t *testing.T) {
	env := testenv.Require(t)
	ctx := testContext(t, time.Minute)
	c := testenv.Client(t, env, "source", true)
	address := testenv.UniqueName("mgmt.snapshot")
	names := []string{address + ".a", address + ".b", address + ".c"}
	for i, name := range names {
		spec := artemis.QueueSpec{Name: name, Address: address, Durable: true, RingSize: -1, MaxConsumers: -1}
		if i == 2 {
			spec.RoutingType, spec.Filter, spec.RingSize, spec.MaxConsumers = "MULTICAST", "color = 'red'", 10, 3
		}
		testenv.CreateQueue(t, ctx, c, spec)
	}
	env.Produce(t, "source", artemis.FQQN(address, names[0]), 4)
	want := map[string]artemis.QueueInfo{}
	for _, name := range names {
		q, err := c.Queue(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		want[name] = q
	}

	snap := artemis.WithSnapshotReads(ctx, time.Hour)
	before := c.ManagementRequests()
	for _, name := range names {
		got, err := c.Queue(snap, name)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[name] {
			t.Errorf("queue %s from the snapshot:\n got %+v\nwant %+v", name, got, want[name])
		}
	}
	if _, err := c.Queue(snap, address+".none"); !errors.Is(err, artemis.ErrNotFound) {
		t.Errorf("a queue the snapshot does not hold: want ErrNotFound, got %v", err)
	}
	if n := c.ManagementRequests() - before; n != 1 {
		t.Errorf("four snapshot reads sent %d management requests, want 1", n)
	}

	// Another client's change is not in the snapshot; a fresh read sees it.
	other := testenv.Client(t, env, "source", true)
	added := address + ".d"
	testenv.CreateQueue(t, ctx, other, artemis.QueueSpec{Name: added, Address: address, Durable: true, RingSize: -1, MaxConsumers: -1})
	if _, err := c.Queue(snap, added); !errors.Is(err, artemis.ErrNotFound) {
		t.Errorf("a queue created after the snapshot, under it: want ErrNotFound, got %v", err)
	}
	if _, err := c.Queue(ctx, added); err != nil {
		t.Errorf("a fresh read of a queue created after the snapshot: %v", err)
	}
	// The client's own change drops the snapshot.
	own := address + ".e"
	testenv.CreateQueue(t, ctx, c, artemis.QueueSpec{Name: own, Address: address, Durable: true, RingSize: -1, MaxConsumers: -1})
	for _, name := range []string{own, added} {
		if _, err := c.Queue(snap, name); err != nil {
			t.Errorf("queue %s under a snapshot taken after this client created a queue: %v", name, err)
		}
	}
}

// The limited transfer user gets the same facts under a snapshot as without one: the snapshot
// is an optimisation, never a new refusal (a pattern read it may not make falls back to the
// read of the queue).
func TestQueue_SnapshotReadsGiveTheTransferUserTheSameFacts(t *testing.T) {
	env := testenv.Require(t)
	ctx := testContext(t, time.Minute)
	admin := testenv.Client(t, env, "source", true)
	name := testenv.UniqueName("mgmt.snapshot.viewer")
	testenv.CreateQueue(t, ctx, admin, artemis.QueueSpec{Name: name, Address: name, Durable: true, RingSize: -1, MaxConsumers: -1})
	c := testenv.Client(t, env, "source", false)
	want, err := c.Queue(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Queue(artemis.WithSnapshotReads(ctx, time.Hour), name)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("as the transfer user under a snapshot:\n got %+v\nwant %+v", got, want)
	}
}
