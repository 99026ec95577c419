package move

import (
	"errors"
	"testing"

	"github.com/Azure/go-amqp"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer/core"
)

func TestOriginOf(t *testing.T) {
	tests := []struct {
		name    string
		msg     *amqp.Message
		want    stagedOrigin
		wantErr error // the error wanted, when errors.Is can name it
		anyErr  bool  // some error is wanted
	}{
		{
			name: "Core message: application properties, id as long",
			msg: &amqp.Message{ApplicationProperties: map[string]any{
				core.PropOrigMessageID: int64(42), core.PropOrigAddress: "orders", core.PropOrigQueue: "orders.q", "other": "x"}},
			want: stagedOrigin{MessageID: 42, Address: "orders", Queue: "orders.q"},
		},
		{
			name: "AMQP message: annotations",
			msg: &amqp.Message{Annotations: amqp.Annotations{
				core.AnnOrigMessageID: int64(7), core.AnnOrigAddress: "a", core.AnnOrigQueue: "q"}},
			want: stagedOrigin{MessageID: 7, Address: "a", Queue: "q"},
		},
		{
			name: "id as ulong",
			msg:  &amqp.Message{Annotations: amqp.Annotations{core.AnnOrigMessageID: uint64(8)}},
			want: stagedOrigin{MessageID: 8},
		},
		{
			name: "id as int",
			msg:  &amqp.Message{ApplicationProperties: map[string]any{core.PropOrigMessageID: int32(9)}},
			want: stagedOrigin{MessageID: 9},
		},
		{
			name: "id as string, as the Artemis docs describe it",
			msg:  &amqp.Message{ApplicationProperties: map[string]any{core.PropOrigMessageID: "10"}},
			want: stagedOrigin{MessageID: 10},
		},
		{
			name: "application property wins over annotation",
			msg: &amqp.Message{
				ApplicationProperties: map[string]any{core.PropOrigMessageID: int64(1), core.PropOrigQueue: "from-property"},
				Annotations:           amqp.Annotations{core.AnnOrigMessageID: int64(2), core.AnnOrigQueue: "from-annotation"}},
			want: stagedOrigin{MessageID: 1, Queue: "from-property"},
		},
		{
			name:    "not staged",
			msg:     &amqp.Message{ApplicationProperties: map[string]any{"other": int64(1)}},
			wantErr: errNotStaged,
		},
		{
			name:    "null id is no id",
			msg:     &amqp.Message{ApplicationProperties: map[string]any{core.PropOrigMessageID: nil}},
			wantErr: errNotStaged,
		},
		{
			name:   "id not a number",
			msg:    &amqp.Message{ApplicationProperties: map[string]any{core.PropOrigMessageID: "abc"}},
			anyErr: true,
		},
		{
			name:   "id of another type",
			msg:    &amqp.Message{ApplicationProperties: map[string]any{core.PropOrigMessageID: 1.5}},
			anyErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := originOf(tt.msg)
			switch {
			case tt.anyErr:
				if err == nil {
					t.Fatalf("no error for %+v", got)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("error %v", err)
			case got != tt.want:
				t.Errorf("origin %+v, want %+v", got, tt.want)
			}
		})
	}
}
