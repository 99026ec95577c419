package core_test

import (
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv/transfertest"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Table tests of a spec's checks. None of them needs a broker.

func TestSpecValidate_AcceptsWhatTheEngineCanRun(t *testing.T) {
	filtered := transfertest.Spec()
	filtered.Selection.Filter = "region = 'eu'"
	byIDs := transfertest.Spec()
	byIDs.Selection.MessageIDs = []string{"ID:1", "2"}
	sameBroker := transfertest.Spec()
	sameBroker.Target.Broker = sameBroker.Source.Broker
	sameBroker.Target.Queue = "orders.copy"
	copied := transfertest.Spec()
	copied.Mode = core.ModeCopy
	for name, s := range map[string]core.Spec{"whole queue": transfertest.Spec(), "filter": filtered, "message ids": byIDs, "copy": copied,
		"one broker, two queues": sameBroker} {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: Validate() = %v, want nil", name, err)
		}
	}
}

func TestSpecValidate_NamesTheFieldAtFaultAndWhatToDo(t *testing.T) {
	tests := []struct {
		name   string
		change func(*core.Spec)
		want   string
	}{
		{"unknown mode", func(s *core.Spec) { s.Mode = "mirror" }, `mode "mirror" is not supported (use "move" or "copy")`},
		{"no mode", func(s *core.Spec) { s.Mode = "" }, `mode "" is not supported (use "move" or "copy")`},
		{"no source broker", func(s *core.Spec) { s.Source.Broker = "" }, "source.broker is required"},
		{"no source queue", func(s *core.Spec) { s.Source.Queue = "" }, "source.queue is required"},
		{"no target broker", func(s *core.Spec) { s.Target.Broker = "" }, "target.broker is required"},
		{"no target queue", func(s *core.Spec) { s.Target.Queue = "" }, "target.queue is required"},
		{"source is a staging queue", func(s *core.Spec) { s.Source.Queue = core.StagingPrefix + "0123456789ab-m4x9k2" },
			`source.queue "studio.transfer.0123456789ab-m4x9k2" is a staging queue of another run: adopt or return that run instead`},
		{"target is a staging queue", func(s *core.Spec) { s.Target.Queue = core.StagingPrefix + "x" },
			`target.queue "studio.transfer.x" is a staging queue of another run: adopt or return that run instead`},
		{"source is the target", func(s *core.Spec) { s.Target = s.Source }, "source and target are the same queue dc1/orders"},
		{"filter and ids", func(s *core.Spec) { s.Selection = core.Selection{Filter: "x = 1", MessageIDs: []string{"ID:1"}} },
			"selection: give filter or message_ids, not both"},
		{"blank id", func(s *core.Spec) { s.Selection.MessageIDs = []string{"ID:1", " \t"} }, "message_ids[1] is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := transfertest.Spec()
			tt.change(&s)
			err := s.Validate()
			if err == nil || err.Error() != tt.want {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSpecValidate_ReportsEveryProblemAtOnce(t *testing.T) {
	s := transfertest.Spec()
	s.Mode = "mirror"
	s.Target.Queue = ""
	s.Selection.MessageIDs = []string{"", "ID:2", ""}
	err := s.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	want := []string{`mode "mirror" is not supported (use "move" or "copy")`, "target.queue is required", "message_ids[0] is empty", "message_ids[2] is empty"}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Validate() reports %q, want %q", got, want)
	}
}
