package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestPositiveRate_RefusesBelowOneNamingTheAttribute(t *testing.T) {
	for _, tt := range []struct {
		v    types.Int64
		fail bool
	}{{types.Int64Value(0), true}, {types.Int64Value(-1), true}, {types.Int64Value(1), false}, {types.Int64Null(), false}, {types.Int64Unknown(), false}} {
		var resp validator.Int64Response
		PositiveRate().ValidateInt64(context.Background(), validator.Int64Request{Path: path.Root("max_messages_per_second"), ConfigValue: tt.v}, &resp)
		if resp.Diagnostics.HasError() != tt.fail {
			t.Errorf("%v: %v", tt.v, resp.Diagnostics)
		}
		if tt.fail {
			d := resp.Diagnostics.Errors()[0]
			if d.Summary() != "Invalid transfer (max_messages_per_second)" || !strings.Contains(d.Detail(), "max_messages_per_second = ") {
				t.Errorf("%v: %s: %s", tt.v, d.Summary(), d.Detail())
			}
		}
	}
}
