package provider

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// leastPrivilegeRefusals is, for each permission the broker-permissions guide lists (keyed as
// testenv.json's least_privilege_users), the words of the refusal a plan gives a user that has
// every other permission but not this one, in the order the CLI prints them. Every permission
// of the guide must be here, and nothing else: the test fails on a permission without a row.
var leastPrivilegeRefusals = map[string][]string{
	"console login":                {"refused the login (source.broker)", `refused the login of user "lp-login"`, "HAWTIO_ROLES"},
	"get*":                         {"(source.broker)", `user "lp-get" lacks the right to read attribute`, "get* and is*", "management.xml"},
	"is*":                          {"(source.broker)", `user "lp-is" lacks the right to read attribute`, "get* and is*", "management.xml"},
	"list*":                        {"lacks a permission (source.broker)", "(listMessagesAsJSON)", "management.xml"},
	"count*":                       {"lacks a permission (source.broker)", "(countMessages)", "management.xml"},
	"browse*":                      {"lacks a permission (source.broker)", "(browse)", "browse(int,int,java.lang.String)"},
	"moveMessages":                 {"lacks a permission (source.broker)", "(moveMessages)", "management.xml"},
	"moveMessage":                  {"lacks a permission (source.broker)", "(moveMessage)", "management.xml"},
	"createQueue":                  {"lacks a permission (source.broker)", "createQueue)", "management.xml"},
	"destroyQueue":                 {"lacks a permission (source.broker)", "(destroyQueue)", "management.xml"},
	"addAddressSettings":           {"lacks a permission (source.broker)", "(addAddressSettings)", "management.xml"},
	"removeAddressSettings":        {"lacks a permission (source.broker)", "(removeAddressSettings)", "management.xml"},
	"send on studio.transfer.#":    {"lacks a permission (source.broker)", "send to a run's manifest queue", "permission='SEND'"},
	"consume on studio.transfer.#": {"lacks a permission (source.broker)", "consume from a staging queue", "permission='CONSUME'"},
	"browse on studio.transfer.#":  {"lacks a permission (source.broker)", "browse a run's manifest queue", "permission='BROWSE'"},
	"send on #":                    {"lacks a permission (target.queue)", "may not send to", "permission='SEND'"},
	"browse on #":                  {"lacks a permission (source.broker)", "opening a browser on", "permission='BROWSE'"},
}

// copyOnlyPermissions are the permissions only a copy uses: their least-privilege user plans a
// copy (with a ledger), since a move never needs them.
var copyOnlyPermissions = map[string]bool{"browse on #": true}

// TestAccQueueTransfer_EachMissingPermissionIsRefusedAtPlanWithNothingMoved: for every
// permission the guide lists, a user holding all the others but that one is refused by
// terraform plan with plan_sends_canaries (a default plan leaves the proofs by writing to apply,
// which TestAccQueueTransfer_PlanWritesNothingByDefaultAndApplyProvesBeforeMoving covers), with an error that names the missing operation on the attribute it serves,
// and nothing moves. The transfer user, who holds them all, plans and moves every message.
func TestAccQueueTransfer_EachMissingPermissionIsRefusedAtPlanWithNothingMoved(t *testing.T) {
	const n = 5
	f := newTransferFixture(t, n)
	if len(f.env.LeastPrivilegeUsers) == 0 {
		t.Skip("the test environment has no least_privilege_users (made by an older scripts/testenv.sh): recreate it")
	}
	perms := make([]string, 0, len(f.env.LeastPrivilegeUsers))
	for p := range f.env.LeastPrivilegeUsers {
		perms = append(perms, p)
		if _, ok := leastPrivilegeRefusals[p]; !ok {
			t.Errorf("permission %q of the test environment has no expected refusal in leastPrivilegeRefusals", p)
		}
	}
	for p := range leastPrivilegeRefusals {
		if _, ok := f.env.LeastPrivilegeUsers[p]; !ok {
			t.Errorf("the test environment grants no permission %q (scripts/testenv.sh TRANSFER_PERMISSIONS)", p)
		}
	}
	sort.Strings(perms)
	for _, perm := range perms {
		want, ok := leastPrivilegeRefusals[perm]
		if !ok {
			continue
		}
		user := f.env.LeastPrivilegeUsers[perm]
		t.Run(perm, func(t *testing.T) {
			// Without destroyQueue the canaries cannot be removed: the plan says so, and the
			// test removes them, even when it fails.
			before := map[*artemis.Client]map[string]bool{f.srcAdmin: canaryQueues(t, f.srcAdmin), f.tgtAdmin: canaryQueues(t, f.tgtAdmin)}
			t.Cleanup(func() {
				for c, had := range before {
					for q := range canaryQueues(t, c) {
						if had[q] {
							continue
						}
						if perm != "destroyQueue" {
							t.Errorf("the plan left canary queue %s on broker %s", q, c.Name())
						}
						ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
						_ = c.DestroyQueue(ctx, q)
						cancel()
					}
				}
			})
			// plan_sends_canaries: the plan proves by writing what a default plan leaves to apply.
			config := withPlanSendsCanaries(asUser(f.env, user, f.env.LeastPrivilegePassword)) + f.resourceBlock()
			if copyOnlyPermissions[perm] {
				config = withLedger(withPlanSendsCanaries(asUser(f.env, user, f.env.LeastPrivilegePassword)), testAccLedgerDSN(t, f.env)) +
					strings.Replace(f.resourceBlock(), "{\n", "{\n  mode = \"copy\"\n", 1)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      config,
					PlanOnly:    true,
					ExpectError: errorRe(want...),
				}},
			})
			f.checkNothingMovedBy(t, n)
		})
	}

	t.Run("transfer user", func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{Config: f.config(""), PlanOnly: true, ExpectNonEmptyPlan: true},
				{Config: f.config(""), Check: resource.ComposeAggregateTestCheckFunc(
					f.checkNoRuns(), f.checkDepths(0, n), f.checkTargetHoldsExactly(f.ids))},
			},
		})
	})
}

// checkNothingMovedBy fails the test unless the source still holds its n messages, the target
// none, and no run of the fixture is staged.
func (f *transferFixture) checkNothingMovedBy(t *testing.T, n int64) {
	t.Helper()
	if d := f.depth(t, f.srcAdmin, f.src); d != n {
		t.Errorf("the source holds %d messages, want the %d it held before", d, n)
	}
	if d := f.depth(t, f.tgtAdmin, f.tgt); d != 0 {
		t.Errorf("the target holds %d messages, want none", d)
	}
	if err := f.checkNoRuns()(nil); err != nil {
		t.Error(err)
	}
}
