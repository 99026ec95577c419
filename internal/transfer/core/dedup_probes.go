package core

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
)

// probeReuseWindow bounds how long a canary's "duplicate detection works" is taken for every
// other transfer to the same target. What the canary shows, the AMQP acceptor's
// amqpDuplicateDetection, changes only when the broker restarts with another configuration
// (acceptors are not reloaded); the bound keeps a long apply from relying on an old answer.
const probeReuseWindow = 15 * time.Minute

// DuplicateProbes shares the duplicate-detection canary (see probeDuplicateDetection) between
// the transfers of one process, so that N transfers to the same target broker send one canary,
// not N, and leave one "AMQ222059 Duplicate message detected" warning in its log, not N. The
// canary shows a property of the broker's AMQP acceptor, not of an address: one probe answers
// for every address of the broker. It is keyed by the target broker's name and node id.
//
// Only a canary that showed duplicate detection working is reused, for probeReuseWindow; one
// that was stored twice or gave no answer is not, so the next transfer probes again. Transfers
// that ask while a canary is out wait for it and take its answer. The zero value is ready to
// use, and it is safe for concurrent use.
type DuplicateProbes struct {
	// Probed, when set, is called after each canary that was sent, with the target broker's
	// name and the canary queue (whose name the broker's warning shows).
	Probed func(broker, canary string)
	// now is time.Now unless a test sets it.
	now func() time.Time

	shared sharedOutcomes[preflight.DuplicateProbe]
}

func (p *DuplicateProbes) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// reusable reports whether a canary's answer, made at madeAt, answers for a transfer asking at
// now: only one that showed duplicate detection working, and not for longer than
// probeReuseWindow.
func reusable(result preflight.DuplicateProbe, madeAt, now time.Time) bool {
	return result.Outcome == preflight.DedupWorks && now.Sub(madeAt) < probeReuseWindow
}

// outcome returns the canary's answer for key: a reusable one already made, the one being made
// now (waiting for it), or a new one from probe.
func (p *DuplicateProbes) outcome(ctx context.Context, key string, probe func(context.Context) preflight.DuplicateProbe) preflight.DuplicateProbe {
	result, err := p.shared.get(ctx, key, p.clock, reusable, probe)
	if err != nil {
		return preflight.DuplicateProbe{Outcome: preflight.DedupUnknown,
			Detail: "waiting for the duplicate-detection canary another transfer sent: " + err.Error()}
	}
	return result
}

// duplicateDetection sends the duplicate-detection canary to the target, into a canary queue of
// the target queue's routing type, or takes the answer of one this process sent for another
// transfer to the same target and routing type (see DuplicateProbes).
func (e *Setup) duplicateDetection(ctx context.Context, targetNodeID string, routing Routing) preflight.DuplicateProbe {
	probe := func(ctx context.Context) preflight.DuplicateProbe {
		canary := CanaryName()
		result := e.probeDuplicateDetection(ctx, canary, routing)
		if e.DuplicateProbes != nil && e.DuplicateProbes.Probed != nil {
			e.DuplicateProbes.Probed(e.Target.Name(), canary)
		}
		return result
	}
	if e.DuplicateProbes == nil {
		return probe(ctx)
	}
	return e.DuplicateProbes.outcome(ctx, e.Target.Name()+"/"+targetNodeID+"/"+routing.String(), probe)
}

// canaryMessage is the canary as the relay would send it to a queue of routing type routing:
// made by outgoingCopy from a staged message marked a JMS destination of the other kind, as the
// source broker marks every message it stores as Core (a queue) and a JMS producer its topic
// messages. A target that routes by that mark instead of the relay's routing type drops it.
func canaryMessage(name string, routing Routing) *amqp.Message {
	otherKind := int8(1) // a JMS topic
	if routing == RoutingMulticast {
		otherKind = 0 // a JMS queue
	}
	staged := &amqp.Message{Header: &amqp.MessageHeader{Durable: true}, Annotations: amqp.Annotations{annJMSDest: otherKind}, Value: "canary"}
	return outgoingCopy(staged, "studio:canary:"+name, 0, routing)
}

// canaryCreditLimit bounds how long a canary send waits for the target's credit.
const canaryCreditLimit = time.Minute

// probeDuplicateDetection sends one message twice with the same duplicate id to canary queue
// name on the target, a queue of routing type routing on an address of its own, shaped as the
// relay shapes what it sends (canaryMessage): one stored copy proves that the acceptor honours
// _AMQ_DUPL_ID over AMQP (amqpDuplicateDetection), which address settings cannot show, and that
// the broker delivers what the relay sends into a queue of that routing type; none stored, that
// it would drop it. The broker logs the discarded repeat as a warning (AMQ222059 Duplicate message
// detected), naming the canary queue; callers go through duplicateDetection, which sends one
// canary per target and routing type for many transfers.
func (e *Setup) probeDuplicateDetection(ctx context.Context, name string, routing Routing) preflight.DuplicateProbe {
	unknown := func(what string, err error) preflight.DuplicateProbe {
		return preflight.DuplicateProbe{Outcome: preflight.DedupUnknown, Routing: routing.String(), Detail: what + ": " + err.Error()}
	}
	if err := e.Target.CreateQueue(ctx, artemis.QueueSpec{Name: name, RoutingType: routing.String(), Durable: true, RingSize: -1, MaxConsumers: -1}, false); err != nil {
		return unknown("creating a canary queue on the target", err)
	}
	defer e.Target.DestroyQueue(context.WithoutCancel(ctx), name) //nolint:errcheck // a canary
	conn, err := ConnectManagementNode(ctx, e.Target)
	if err != nil {
		return unknown("connecting to the target", err)
	}
	defer conn.Close()
	s, err := conn.NewSender(ctx, artemis.FQQN(name, name), artemis.SenderOptions{MaxInFlight: 2})
	if err != nil {
		return unknown("sending to a canary queue on the target", err)
	}
	defer s.Close(ctx)
	// A target that grants no credit (disk full, a blocked address) would hold a plan for as long
	// as it lasts; the check says so instead, within a minute.
	wait := artemis.CreditWait{Limit: min(e.Graces.WithDefaults().Credit, canaryCreditLimit)}
	for i := 0; i < 2; i++ {
		if err := s.SendStored(ctx, canaryMessage(name, routing), wait); err != nil {
			return unknown("sending to a canary queue on the target", err)
		}
	}
	q, err := e.Target.Queue(ctx, name)
	if err != nil {
		return unknown("reading the canary queue", err)
	}
	switch q.MessageCount {
	case 1:
		return preflight.DuplicateProbe{Outcome: preflight.DedupWorks, Routing: routing.String(), Detail: "a repeated duplicate id was discarded"}
	case 2:
		return preflight.DuplicateProbe{Outcome: preflight.DedupDisabled, Routing: routing.String(),
			Detail: fmt.Sprintf("canary queue %s on %s holds both copies", name, e.Target.Name())}
	case 0:
		return preflight.DuplicateProbe{Outcome: preflight.DedupDiscarded, Routing: routing.String(),
			Detail: fmt.Sprintf("canary queue %s on %s holds neither of the two copies it accepted", name, e.Target.Name())}
	default:
		return preflight.DuplicateProbe{Outcome: preflight.DedupUnknown, Routing: routing.String(), Detail: fmt.Sprintf("the canary queue holds %d messages", q.MessageCount)}
	}
}
