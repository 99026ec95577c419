package harness

import (
	"strings"
	"testing"
	"time"
)

func TestTransferConfig_NamesBothKeysAndTheTimeout(t *testing.T) {
	key := BrokerKey{AMQPURLs: []string{"amqp://127.0.0.1:1", "amqp://127.0.0.1:2"}, ManagementURL: "http://127.0.0.1:3/console/jolokia",
		Username: "transfer", Password: "pw\"x"}
	move := TransferConfig{Resource: "fault", Source: key, Target: key, SourceQueue: "src.q", TargetQueue: "tgt.q", Create: 4 * time.Minute}
	got := move.String()
	for _, want := range []string{`amqp_urls      = ["amqp://127.0.0.1:1", "amqp://127.0.0.1:2"]`, `password       = "pw\"x"`,
		`source = { broker = "source", queue = "src.q" }`, `target = { broker = "target", queue = "tgt.q" }`, `timeouts = { create = "4m0s" }`} {
		if !strings.Contains(got, want) {
			t.Errorf("configuration lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "mode") || strings.Contains(got, "ledger_dsn") {
		t.Errorf("a move names a mode or a ledger:\n%s", got)
	}
	cp := move
	cp.LedgerDSN = "postgres://postgres@127.0.0.1:5432/faults_x?sslmode=disable"
	got = cp.String()
	for _, want := range []string{`ledger_dsn = "postgres://postgres@127.0.0.1:5432/faults_x?sslmode=disable"`, `mode   = "copy"`} {
		if !strings.Contains(got, want) {
			t.Errorf("a copy's configuration lacks %s:\n%s", want, got)
		}
	}
	tuned := move
	tuned.BatchSize, tuned.ChunkSize, tuned.MaxInFlightBytes = 500, 10000, 64<<20
	got = tuned.String()
	for _, want := range []string{`resource "artemis_queue_transfer" "fault" {`, "  batch_size = 500\n", "  staging_chunk_size = 10000\n", "  max_in_flight_bytes = 67108864\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("a tuned configuration lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(move.String(), "batch_size") {
		t.Errorf("an untuned configuration sets batch_size:\n%s", move.String())
	}
}

func TestTransferConfig_AReturnOfARunInsteadOfTheTransfer(t *testing.T) {
	key := BrokerKey{AMQPURLs: []string{"amqp://127.0.0.1:1"}, ManagementURL: "http://127.0.0.1:3/console/jolokia", Username: "u", Password: "p"}
	ret := TransferConfig{Resource: "back", Source: key, Target: key, ReturnRunID: "0123456789ab-m1x2y3"}
	got := ret.String()
	for _, want := range []string{`resource "artemis_transfer_return" "back" {`, `broker = "source"`, `run_id = "0123456789ab-m1x2y3"`, `source = {`} {
		if !strings.Contains(got, want) {
			t.Errorf("the return's configuration lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "artemis_queue_transfer") {
		t.Errorf("the return's configuration holds a transfer:\n%s", got)
	}
}
