package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// Manifest records a run on its source broker, as one durable message in the run's manifest
// queue beside staging. With it a fresh process (or an operator) can tell what an unfinished run
// is, resume it with the same t0, or return its messages, from the broker alone.
type Manifest struct {
	FormatVersion int       `json:"format_version"`
	RunID         string    `json:"run_id"`
	T0            time.Time `json:"t0"`
	Spec          Spec      `json:"spec"`
	SourceNodeID  string    `json:"source_node_id"`
	TargetNodeID  string    `json:"target_node_id"`
	CreatedAt     time.Time `json:"created_at"`
	CreatedBy     string    `json:"created_by"`
}

const manifestFormatVersion = 1

// manifestReadTimeout bounds the wait for the manifest message; Artemis gives a browser no
// end-of-queue signal, so an empty manifest queue is recognised by silence.
const manifestReadTimeout = 1500 * time.Millisecond

// writeManifest puts the manifest into the (empty) manifest queue as a durable message.
func writeManifest(ctx context.Context, conn *artemis.Connection, m Manifest) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding the manifest of run %s: %w", m.RunID, err)
	}
	fqqn := StagingQueue(m.RunID) + "::" + ManifestQueue(m.RunID)
	sender, err := conn.NewSender(ctx, fqqn, artemis.SenderOptions{MaxInFlight: 1})
	if err != nil {
		return fmt.Errorf("writing the manifest of run %s: %w", m.RunID, err)
	}
	defer sender.Close(context.WithoutCancel(ctx)) //nolint:errcheck // best effort after the outcome is known
	ct := "application/json"
	msg := &amqp.Message{
		Header:     &amqp.MessageHeader{Durable: true},
		Properties: &amqp.MessageProperties{ContentType: &ct, Subject: &m.RunID},
		Value:      string(body),
	}
	pending, err := sender.Send(ctx, msg)
	if err != nil {
		return fmt.Errorf("writing the manifest of run %s: %w", m.RunID, err)
	}
	if err := pending.Wait(ctx); err != nil {
		return fmt.Errorf("writing the manifest of run %s: %w", m.RunID, err)
	}
	return nil
}

// errNoManifest: the manifest queue exists but holds no manifest (a run that died between
// creating its queues and writing it).
var errNoManifest = errors.New("no manifest")

// readManifest browses the manifest queue without consuming it.
func readManifest(ctx context.Context, conn *artemis.Connection, runID string) (Manifest, error) {
	fqqn := StagingQueue(runID) + "::" + ManifestQueue(runID)
	browser, err := conn.NewBrowser(ctx, fqqn, artemis.BrowserOptions{Credit: 1, IdleTimeout: manifestReadTimeout})
	if err != nil {
		return Manifest{}, fmt.Errorf("reading the manifest of run %s: %w", runID, err)
	}
	defer browser.Close(context.WithoutCancel(ctx)) //nolint:errcheck // nothing to settle on a browser
	msg, ok, err := browser.Next(ctx)
	if err != nil {
		return Manifest{}, fmt.Errorf("reading the manifest of run %s: %w", runID, err)
	}
	if !ok {
		return Manifest{}, fmt.Errorf("run %s: %w", runID, errNoManifest)
	}
	var text string
	switch v := msg.Value.(type) {
	case string:
		text = v
	default:
		text = string(msg.GetData())
	}
	var m Manifest
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return Manifest{}, fmt.Errorf("run %s: the manifest is not readable: %w", runID, err)
	}
	if m.FormatVersion > manifestFormatVersion {
		return Manifest{}, fmt.Errorf("run %s was written by a newer provider (manifest format %d): upgrade the provider", runID, m.FormatVersion)
	}
	return m, nil
}
