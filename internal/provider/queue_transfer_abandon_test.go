package provider

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// An interrupted copy, left with no state (its apply failed), is imported by its run id, and
// its destroy abandons it in the ledger; retention then purges it. What it copied stays on the
// target, and the source is untouched.
func TestAccQueueTransfer_AnInterruptedCopyIsImportedByItsRunIDAndItsDestroyAbandonsIt(t *testing.T) {
	f := newTransferFixture(t, 1000)
	dsn := testAccLedgerDSN(t, f.env)
	l := testenv.OpenLedger(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res := f.startInterruptedCopy(t, l)
	providerBlock := withLedger(testAccProviderBlock(f.env, "source", "target"), dsn)
	config := f.copyConfig(dsn, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             config,
				ResourceName:       "artemis_queue_transfer.t",
				ImportState:        true,
				ImportStateId:      "source/" + res.RunID,
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("imported %d instances, want 1", len(states))
					}
					a := states[0].Attributes
					for attr, want := range map[string]string{"run_id": res.RunID, "mode": "copy", "status": "unfinished",
						"source.queue": f.src, "target.broker": "target", "target.queue": f.tgt} {
						if a[attr] != want {
							return fmt.Errorf("imported %s = %q, want %q", attr, a[attr], want)
						}
					}
					return nil
				},
			},
			{
				// The resource leaves the configuration: its destroy abandons the copy.
				Config: providerBlock,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						run, err := l.GetRun(ctx, res.RunID)
						if err != nil {
							return err
						}
						if run.Status != ledger.StatusAbandoned || run.Lease != nil {
							return fmt.Errorf("copy run %s is %s (lease %+v) after the destroy, want abandoned and free", res.RunID, run.Status, run.Lease)
						}
						return nil
					},
					checkQueueHoldsExactly(f.srcAdmin, f.src, f.ids),
				),
			},
		},
	})
	if got := f.depth(t, f.tgtAdmin, f.tgt); got < 200 || got > 400 {
		t.Fatalf("the target holds %d messages, want what the interrupted copy sent (about 300): the abandon copies nothing", got)
	}
}

// startInterruptedCopy runs a copy of the fixture that stops after 300 sends, recorded in l,
// as an apply interrupted with no state left.
func (f *transferFixture) startInterruptedCopy(t *testing.T, l *ledger.Ledger) transfer.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	sent := 0
	e := &transfer.Engine{Source: testenv.Client(t, f.env, "source", false), Target: testenv.Client(t, f.env, "target", false),
		Options: transfer.Options{BatchSize: 100}, Bookkeeper: transfer.NewLedgerBook(l, ledger.Creator{}),
		Hooks: transfer.Hooks{BeforeSend: func() {
			if sent++; sent == 300 {
				stop()
			}
		}}}
	spec := transfer.Spec{Mode: transfer.ModeCopy, Source: transfer.Endpoint{Broker: "source", Queue: f.src},
		Target: transfer.Endpoint{Broker: "target", Queue: f.tgt}}
	res, err := e.Run(runCtx, spec)
	if !errors.Is(err, transfer.ErrInterrupted) {
		t.Fatalf("the copy stopped after 300 sends: %+v, %v; want it interrupted", res, err)
	}
	return res
}

// An imported interrupted copy is finished by the next apply, with its t0, exactly.
func TestAccQueueTransfer_AnImportedInterruptedCopyIsFinishedByApply(t *testing.T) {
	f := newTransferFixture(t, 1000)
	dsn := testAccLedgerDSN(t, f.env)
	res := f.startInterruptedCopy(t, testenv.OpenLedger(t, dsn))
	config := f.copyConfig(dsn, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, ResourceName: "artemis_queue_transfer.t", ImportState: true, ImportStateId: "source/" + res.RunID, ImportStatePersist: true},
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("artemis_queue_transfer.t", "run_id", res.RunID),
					resource.TestCheckResourceAttr("artemis_queue_transfer.t", "status", "completed"),
					resource.TestCheckResourceAttr("artemis_queue_transfer.t", "messages_relayed", "1000"),
					f.checkTargetHoldsExactly(f.ids),
					checkQueueHoldsExactly(f.srcAdmin, f.src, f.ids),
				),
			},
		},
	})
}
