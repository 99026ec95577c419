package copying

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/preflight"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

func TestPreflight_ACopyOnlyReadsTheSourceAndCountsMessagesWithoutAMessageID(t *testing.T) {
	ctx := transfertest.Ctx(t, 5*time.Minute)
	f := newCopyFixture(t, ctx, "copyplan", 20, false)
	// 10 more without a message-id, 5 of them alike in everything a browse shows.
	transfertest.Produce(t, ctx, f.srcAdmin, f.src, 10, func(i int) *amqp.Message {
		body := "same"
		if i >= 5 {
			body = "body " + strconv.Itoa(i)
		}
		return &amqp.Message{Header: &amqp.MessageHeader{Durable: true}, Value: body}
	})
	viewer := func(broker string) *artemis.Client {
		b := f.env.Broker(t, broker)
		c, err := artemis.New(artemis.Config{Name: broker, AMQPURLs: []string{b.AMQPURL}, ManagementURL: b.ManagementURL,
			Username: f.env.ViewerUser, Password: f.env.ViewerPassword})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// A reviewer who may only read and browse plans a copy without a refusal: nothing on the
	// source needs more.
	e := &Copier{setup: &core.Setup{Source: viewer("source"), Target: viewer("target"), Bookkeeper: testBook{&transfertest.Book{Ledger: f.ledger}}}}
	findings, err := e.Preflight(ctx, f.spec, false)
	if err != nil {
		t.Fatal(err)
	}
	var identity string
	for _, fd := range findings {
		if fd.Severity == preflight.Error {
			t.Errorf("refused: %s: %s", fd.Summary, fd.Detail)
		}
		if fd.Summary == "How a copy tells messages apart" {
			identity = fd.Detail
		}
	}
	if !strings.Contains(identity, "Of the first 30 selected messages") || !strings.Contains(identity, "10 carry no message-id and 4 are identical") {
		t.Errorf("the identity finding says %q, want 30 sampled, 10 without a message-id, 4 identical to another", identity)
	}
	// The full plan, with the transfer engine's user on the target, writes nothing on the source.
	queuesBefore, err := f.srcAdmin.ListQueues(ctx, core.StagingPrefix)
	if err != nil {
		t.Fatal(err)
	}
	findings, err = f.engine(t, core.Options{}).Preflight(ctx, f.spec, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range findings {
		if fd.Severity == preflight.Error {
			t.Errorf("refused: %s: %s", fd.Summary, fd.Detail)
		}
	}
	if queuesAfter, err := f.srcAdmin.ListQueues(ctx, core.StagingPrefix); err != nil || len(queuesAfter) != len(queuesBefore) {
		t.Errorf("staging-prefixed queues on the source: %d before the plan, %d after (%v)", len(queuesBefore), len(queuesAfter), err)
	}
}
