package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

// Table tests of the mapping between the artemis_queue_transfer model and the engine's
// results and runs. None of them needs a broker or terraform.

func TestCompleted_FillsTheComputedAttributesOfAFinishedRun(t *testing.T) {
	m := queueTransferModel{
		Source:           &endpointModel{Broker: types.StringValue("dc1"), Queue: types.StringValue("orders")},
		MessagesReturned: types.Int64Unknown(),
	}
	t0 := time.Date(2026, 12, 1, 6, 59, 17, 123_000_000, time.FixedZone("CET", 3600))
	// Relayed counts this process only; RelayedTotal every process that worked on the run.
	res := transfer.Result{RunID: "0123456789ab-m4x9k2", T0: t0, Relayed: 10, RelayedTotal: 25}
	before := time.Now().UTC().Truncate(time.Second)
	completed(&m, res)
	after := time.Now().UTC()

	for name, tt := range map[string]struct{ got, want string }{
		"id":            {m.ID.ValueString(), "dc1/0123456789ab-m4x9k2"},
		"run_id":        {m.RunID.ValueString(), "0123456789ab-m4x9k2"},
		"staging_queue": {m.StagingQueue.ValueString(), "studio.transfer.0123456789ab-m4x9k2"},
		"t0":            {m.T0.ValueString(), "2026-12-01T05:59:17.123Z"},
		"status":        {m.Status.ValueString(), "completed"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", name, tt.got, tt.want)
		}
	}
	checkInt64s(t, map[string]int64Want{
		"messages_relayed":   {m.MessagesRelayed, 25},
		"messages_returned":  {m.MessagesReturned, 0},
		"messages_remaining": {m.MessagesRemaining, 0},
	})
	finished, err := time.Parse(time.RFC3339, m.FinishedAt.ValueString())
	if err != nil || finished.Before(before) || finished.After(after) {
		t.Errorf("finished_at = %q (%v), want an RFC 3339 time between %v and %v", m.FinishedAt.ValueString(), err, before, after)
	}
}

func TestCompleted_KeepsTheMessagesReturnedOfAnEarlierDestroy(t *testing.T) {
	m := queueTransferModel{Source: &endpointModel{Broker: types.StringValue("dc1")}, MessagesReturned: types.Int64Value(7)}
	completed(&m, transfer.Result{RunID: "0123456789ab-m4x9k2"})
	if m.MessagesReturned.ValueInt64() != 7 {
		t.Errorf("messages_returned = %s, want 7 kept", m.MessagesReturned)
	}
}

func adoptableRun(sel core.Selection) transfer.UnfinishedRun {
	spec := transfer.Spec{Mode: transfer.ModeMove, Source: transfer.Endpoint{Broker: "dc1", Queue: "orders", Address: "orders"},
		Target: transfer.Endpoint{Broker: "dc2", Queue: "orders.new", Address: "orders.new"}, Selection: sel}
	t0 := time.Date(2026, 12, 1, 6, 59, 17, 123_000_000, time.FixedZone("CET", 3600))
	id := core.NewRunID(spec, t0)
	return transfer.UnfinishedRun{RunID: id, Mode: transfer.ModeMove, T0: t0, StagingQueue: transfer.StagingQueue(id), Messages: 42,
		Spec: spec, SelectedIDs: len(sel.MessageIDs)}
}

func TestAdopt_FillsAnImportedModelFromTheRunOnTheBroker(t *testing.T) {
	run := adoptableRun(core.Selection{Filter: "region = 'eu'"})
	// As ImportState builds it: the source broker from the import id, nothing else known.
	m := queueTransferModel{
		Source:           &endpointModel{Broker: types.StringValue("dc1"), Address: types.StringNull()},
		Target:           &endpointModel{Broker: types.StringNull(), Address: types.StringNull()},
		MessagesRelayed:  types.Int64Value(0),
		MessagesReturned: types.Int64Value(0),
	}
	adopt(&m, run)

	for name, tt := range map[string]struct {
		got  types.String
		want string
	}{
		"run_id":        {m.RunID, run.RunID},
		"staging_queue": {m.StagingQueue, run.StagingQueue},
		"t0":            {m.T0, "2026-12-01T05:59:17.123Z"},
		"status":        {m.Status, "unfinished"},
		"mode":          {m.Mode, "move"},
		"source.broker": {m.Source.Broker, "dc1"},
		"source.queue":  {m.Source.Queue, "orders"},
		"target.queue":  {m.Target.Queue, "orders.new"},
		"filter":        {m.Filter, "region = 'eu'"},
		"on_destroy":    {m.OnDestroy, "return"},
	} {
		if tt.got.IsNull() || tt.got.IsUnknown() || tt.got.ValueString() != tt.want {
			t.Errorf("%s = %s, want %q", name, tt.got, tt.want)
		}
	}
	// The addresses stay as configured (null: looked up); the manifest's are what the run found.
	for name, v := range map[string]types.String{"source.address": m.Source.Address, "target.address": m.Target.Address,
		"finished_at": m.FinishedAt} {
		if !v.IsNull() {
			t.Errorf("%s = %s, want null", name, v)
		}
	}
	// ImportState sets the target broker itself; adopt leaves an existing target's broker alone.
	if !m.Target.Broker.IsNull() {
		t.Errorf("target.broker = %s, want it left to the caller", m.Target.Broker)
	}
	if !m.MessageIDs.IsNull() {
		t.Errorf("message_ids = %s, want null for a filter run", m.MessageIDs)
	}
	checkInt64s(t, map[string]int64Want{
		"messages_remaining": {m.MessagesRemaining, 42},
		"messages_relayed":   {m.MessagesRelayed, 0},
		"messages_returned":  {m.MessagesReturned, 0},
		// The engine's defaults, as the schema has them.
		"batch_size":          {m.BatchSize, 500},
		"staging_chunk_size":  {m.StagingChunkSize, 2000},
		"max_in_flight_bytes": {m.MaxInFlightBytes, 32 << 20},
	})
}

func TestAdopt_WithoutEndpointsTakesBothBrokersFromTheManifest(t *testing.T) {
	var m queueTransferModel
	adopt(&m, adoptableRun(core.Selection{}))
	if m.Source == nil || m.Target == nil {
		t.Fatalf("source = %v, target = %v; want both filled", m.Source, m.Target)
	}
	if m.Source.Broker.ValueString() != "dc1" || m.Target.Broker.ValueString() != "dc2" {
		t.Errorf("brokers = %s -> %s, want dc1 -> dc2", m.Source.Broker, m.Target.Broker)
	}
	if !m.Source.Address.IsNull() || !m.Target.Address.IsNull() {
		t.Errorf("addresses = %s, %s; want null", m.Source.Address, m.Target.Address)
	}
	if !m.Filter.IsNull() || !m.MessageIDs.IsNull() {
		t.Errorf("filter = %s, message_ids = %s; want both null for a whole-queue run", m.Filter, m.MessageIDs)
	}
}

func TestAdopt_KeepsTheMessageIDsInOrder(t *testing.T) {
	var m queueTransferModel
	adopt(&m, adoptableRun(core.Selection{MessageIDs: []string{"ID:b", "a", "ID:c"}}))
	var ids []string
	if d := m.MessageIDs.ElementsAs(context.Background(), &ids, false); d.HasError() {
		t.Fatal(d)
	}
	if len(ids) != 3 || ids[0] != "ID:b" || ids[1] != "a" || ids[2] != "ID:c" {
		t.Errorf("message_ids = %q, want [ID:b a ID:c] as recorded", ids)
	}
	if !m.Filter.IsNull() {
		t.Errorf("filter = %s, want null", m.Filter)
	}
}

func TestAdopt_KeepsWhatStateAlreadyHolds(t *testing.T) {
	// As Read finds it in state: earlier applies relayed some, the tuning was configured.
	m := queueTransferModel{
		Source:           &endpointModel{Broker: types.StringValue("dc1"), Address: types.StringValue("orders")},
		Target:           &endpointModel{Broker: types.StringValue("dc2"), Address: types.StringValue("orders.new")},
		MessagesRelayed:  types.Int64Value(100),
		MessagesReturned: types.Int64Value(3),
		BatchSize:        types.Int64Value(50),
		StagingChunkSize: types.Int64Value(10),
		MaxInFlightBytes: types.Int64Value(1 << 20),
		OnDestroy:        types.StringValue("leave"),
		FinishedAt:       types.StringValue("2026-12-01T06:00:00Z"),
	}
	adopt(&m, adoptableRun(core.Selection{}))
	for name, tt := range map[string]struct {
		got  types.Int64
		want int64
	}{
		"messages_relayed": {m.MessagesRelayed, 100}, "messages_returned": {m.MessagesReturned, 3},
		"batch_size": {m.BatchSize, 50}, "staging_chunk_size": {m.StagingChunkSize, 10}, "max_in_flight_bytes": {m.MaxInFlightBytes, 1 << 20},
		"messages_remaining": {m.MessagesRemaining, 42},
	} {
		if tt.got.ValueInt64() != tt.want {
			t.Errorf("%s = %s, want %d", name, tt.got, tt.want)
		}
	}
	for name, tt := range map[string]struct {
		got  types.String
		want string
	}{
		"on_destroy": {m.OnDestroy, "leave"}, "source.address": {m.Source.Address, "orders"}, "target.address": {m.Target.Address, "orders.new"},
		"target.broker": {m.Target.Broker, "dc2"},
	} {
		if tt.got.ValueString() != tt.want {
			t.Errorf("%s = %s, want %q", name, tt.got, tt.want)
		}
	}
	if !m.FinishedAt.IsNull() {
		t.Errorf("finished_at = %s, want null: the run is not finished", m.FinishedAt)
	}
}

func TestSpec_MapsTheModelToTheEnginesSpec(t *testing.T) {
	ids, _ := types.ListValueFrom(context.Background(), types.StringType, []string{"ID:1", "2"})
	m := queueTransferModel{
		Mode:       types.StringValue("copy"),
		Source:     &endpointModel{Broker: types.StringValue("dc1"), Queue: types.StringValue("orders"), Address: types.StringValue("orders")},
		Target:     &endpointModel{Broker: types.StringValue("dc2"), Queue: types.StringValue("orders.new"), Address: types.StringNull()},
		Filter:     types.StringNull(),
		MessageIDs: ids,
	}
	s, diags := m.spec(context.Background())
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := transfer.Spec{Mode: transfer.ModeCopy,
		Source:    transfer.Endpoint{Broker: "dc1", Queue: "orders", Address: "orders"},
		Target:    transfer.Endpoint{Broker: "dc2", Queue: "orders.new"},
		Selection: core.Selection{MessageIDs: []string{"ID:1", "2"}}}
	if s.Mode != want.Mode || s.Source != want.Source || s.Target != want.Target || s.Selection.Filter != "" ||
		strings.Join(s.Selection.MessageIDs, ",") != strings.Join(want.Selection.MessageIDs, ",") {
		t.Errorf("spec = %+v, want %+v", s, want)
	}
	m.Mode = types.StringNull()
	if s, _ := m.spec(context.Background()); s.Mode != transfer.ModeMove {
		t.Errorf("a model without mode gives mode %q, want %q", s.Mode, transfer.ModeMove)
	}
}

func TestOptions_MapsTheTuningToTheEnginesOptions(t *testing.T) {
	m := queueTransferModel{BatchSize: types.Int64Value(50), StagingChunkSize: types.Int64Value(10),
		MaxInFlightBytes: types.Int64Value(1 << 20), MaxMessagesPerSec: types.Int64Value(200)}
	o := m.options(context.Background())
	if o.BatchSize != 50 || o.ChunkSize != 10 || o.MaxInFlightBytes != 1<<20 || o.MaxMessagesPerSecond != 200 ||
		o.CreatedBy != "terraform-provider-artemis" || o.Progress == nil {
		t.Errorf("options = %+v", o)
	}
	if (&queueTransferModel{}).options(context.Background()).MaxMessagesPerSecond != 0 {
		t.Error("an unset max_messages_per_second must leave the rate uncapped (0)")
	}
}

// int64Want is an Int64 attribute of a model and the value a test wants it to hold.
type int64Want struct {
	got  types.Int64
	want int64
}

// checkInt64s checks that each named attribute is known and holds its wanted value.
func checkInt64s(t *testing.T, wants map[string]int64Want) {
	t.Helper()
	for name, tt := range wants {
		if tt.got.IsNull() || tt.got.IsUnknown() || tt.got.ValueInt64() != tt.want {
			t.Errorf("%s = %s, want %d", name, tt.got, tt.want)
		}
	}
}
