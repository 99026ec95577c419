package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/jackc/pgx/v5"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// canaryLogMark is what every AMQ222059 warning about a duplicate-detection canary says in the
// target broker's log (see canaryWarning).
const canaryLogMark = "_AMQ_DUPL_ID=studio:canary:"

// asViewer is the provider block of the source and the target as the environment's reviewer,
// a user who may log in, read management attributes, list, count and browse, and nothing else.
func asViewer(env *testenv.Env) string {
	return asUser(env, env.ViewerUser, env.ViewerPassword)
}

// ledgerTables counts the tables of the ledger's database outside PostgreSQL's own schemas.
func ledgerTables(t *testing.T, dsn string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to the ledger's database: %v", err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`).Scan(&n); err != nil {
		t.Fatalf("counting the ledger's tables: %v", err)
	}
	return n
}

// TestAccQueueTransfer_PlanWritesNothingByDefaultAndApplyProvesBeforeMoving: with default
// settings, a reviewer whose broker user may only read and browse plans a transfer (with a
// ledger) and the plan passes; it leaves no canary queue on the source, no duplicate warning
// (AMQ222059) in the target broker's log, and no table in the ledger's database, and the
// transfers runs data source reads the not yet created ledger as empty. With
// plan_sends_canaries the same user's plan sends the canaries and is refused for what it may
// not write. An apply with that user and default settings makes the proofs and refuses before
// anything moves; the operator's apply then creates the ledger's schema and moves every message.
func TestAccQueueTransfer_PlanWritesNothingByDefaultAndApplyProvesBeforeMoving(t *testing.T) {
	f := newTransferFixture(t, 50)
	dsn := testAccLedgerDSN(t, f.env)
	runs := `
data "artemis_transfer_runs" "all" {}
`
	viewer := withLedger(asViewer(f.env), dsn) + f.resourceBlock()
	logs := traceLogs(t)
	nothingMoved := func() { f.checkNothingMovedBy(t, int64(len(f.ids))) }
	canariesBefore := canaryQueues(t, f.srcAdmin)
	logBefore := f.env.CountInLog(t, "target", canaryLogMark)
	plainPlanWroteNothing := func() {
		for q := range canaryQueues(t, f.srcAdmin) {
			if !canariesBefore[q] {
				t.Errorf("the plan left queue %s on the source", q)
			}
		}
		if n := f.env.CountInLog(t, "target", canaryLogMark); n != logBefore {
			t.Errorf("the target's log holds %d duplicate-detection canary warnings (AMQ222059) after the plan, %d before it", n, logBefore)
		}
		if n := ledgerTables(t, dsn); n != 0 {
			t.Errorf("the plan created %d tables in the ledger's database", n)
		}
		nothingMoved()
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			// The reviewer's plan, with default settings: no error, a change to review.
			{Config: viewer + runs, PlanOnly: true, ExpectNonEmptyPlan: true},
			// Opted in, the same user's plan writes the proofs and is refused for what it may not do.
			{PreConfig: plainPlanWroteNothing, Config: withPlanSendsCanaries(withLedger(asViewer(f.env), dsn)) + f.resourceBlock(),
				PlanOnly: true, ExpectError: regexp.MustCompile(`The broker user lacks a permission`)},
			// Apply with the reviewer's user and default settings makes the proofs, and refuses.
			{PreConfig: nothingMoved, Config: viewer, ExpectError: regexp.MustCompile(`The broker user lacks a permission`)},
			// The operator's apply creates the ledger's schema and moves everything.
			{
				PreConfig: nothingMoved,
				Config:    withLedger(testAccProviderBlock(f.env, "source", "target"), dsn) + f.resourceBlock(),
				Check: resource.ComposeAggregateTestCheckFunc(f.checkNoRuns(), f.checkTargetHoldsExactly(f.ids),
					resource.TestCheckResourceAttr("artemis_queue_transfer.t", "messages_relayed", fmt.Sprint(len(f.ids)))),
			},
		},
	})
	if n := ledgerTables(t, dsn); n == 0 {
		t.Error("the apply recorded its run without creating the ledger's tables")
	}
	// What the reviewer's plan said: the proofs apply makes, the schema apply creates, and a
	// ledger that records no run yet.
	all := logs()
	for _, want := range []string{`Apply proves what this plan could not without writing \(target\.broker\)`,
		`Apply creates or migrates the transfer ledger's schema \(ledger_dsn\)`, `The transfer ledger records no run yet \(ledger_dsn\)`} {
		if !warningWith(all, regexp.MustCompile(want)) {
			t.Errorf("no warning matching %s", want)
		}
	}
}

// TestAccQueueTransfer_OptedInPlanSendsTheDuplicateCanary: with plan_sends_canaries the plan
// sends the duplicate-detection canary, which the target broker logs (AMQ222059), so that the
// default plan's empty log above is the absence of a canary, not a log that cannot show one.
func TestAccQueueTransfer_OptedInPlanSendsTheDuplicateCanary(t *testing.T) {
	f := newTransferFixture(t, 5)
	before := f.env.CountInLog(t, "target", canaryLogMark)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: withPlanSendsCanaries(testAccProviderBlock(f.env, "source", "target")) + f.resourceBlock(), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
	if n := f.env.CountInLog(t, "target", canaryLogMark); n <= before {
		t.Errorf("the target's log holds %d canary warnings after an opted-in plan, %d before it: the plan sent no canary", n, before)
	}
	f.checkNothingMovedBy(t, int64(len(f.ids)))
}

// TestAccQueueTransfer_DefaultApplyRefusesATargetThatStoresDuplicatesBeforeMoving: a target
// acceptor that ignores duplicate ids can be told only by sending; the default plan cannot
// see it and says that apply proves it, and apply sends the canary and refuses before
// anything moves.
func TestAccQueueTransfer_DefaultApplyRefusesATargetThatStoresDuplicatesBeforeMoving(t *testing.T) {
	f := newTransferFixture(t, 20)
	tb := f.env.Broker(t, "target")
	noDedup := strings.Replace(testAccProviderBlock(f.env, "source", "target"), fmt.Sprintf("[%q, %q]", tb.AMQPURL, tb.AMQPSURL),
		fmt.Sprintf("[%q]", tb.AMQPNoDedupURL), 1)
	logs := traceLogs(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: noDedup + f.resourceBlock(), PlanOnly: true, ExpectNonEmptyPlan: true},
			{Config: noDedup + f.resourceBlock(), ExpectError: regexp.MustCompile(`(?s)Target stores duplicate AMQP messages.*stored\s+twice`)},
		},
	})
	if !warningWith(logs(), regexp.MustCompile(`Apply proves what this plan could not without writing`)) {
		t.Error("the plan did not warn that apply proves what it could not without writing")
	}
	f.checkNothingMovedBy(t, int64(len(f.ids)))
}
