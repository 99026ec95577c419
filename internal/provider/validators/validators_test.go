package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestInt64Range_RefusesOutsideItsBoundsSayingTheDefaultAndWhy(t *testing.T) {
	bounded := Int64Range(1, 100, 50, "Because.")
	open := Int64Range(1024, 0, 4096, "Too small.")
	for _, tt := range []struct {
		v    validator.Int64
		in   types.Int64
		want []string // empty: accepted
	}{
		{bounded, types.Int64Value(0), []string{"batch_size = 0 is out of range", "from 1 to 100", "the default 50. Because."}},
		{bounded, types.Int64Value(101), []string{"batch_size = 101", "from 1 to 100"}},
		{bounded, types.Int64Value(1), nil},
		{bounded, types.Int64Value(100), nil},
		{bounded, types.Int64Null(), nil},
		{bounded, types.Int64Unknown(), nil},
		{open, types.Int64Value(1023), []string{"at least 1024", "the default 4096. Too small."}},
		{open, types.Int64Value(1 << 40), nil},
	} {
		var resp validator.Int64Response
		tt.v.ValidateInt64(context.Background(), validator.Int64Request{Path: path.Root("batch_size"), ConfigValue: tt.in}, &resp)
		if resp.Diagnostics.HasError() != (len(tt.want) > 0) {
			t.Errorf("%s: %v", tt.in, resp.Diagnostics)
			continue
		}
		for _, d := range resp.Diagnostics {
			if d.Summary() != "Invalid transfer (batch_size)" {
				t.Errorf("%s: summary %q", tt.in, d.Summary())
			}
			for _, w := range tt.want {
				if !strings.Contains(d.Detail(), w) {
					t.Errorf("%s: detail %q does not say %q", tt.in, d.Detail(), w)
				}
			}
		}
	}
}

func TestNamedString_NamesTheAttributeInTheLibrarysRefusal(t *testing.T) {
	v := NamedString(stringvalidator.OneOf("return", "leave"))
	var resp validator.StringResponse
	v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("on_destroy"), ConfigValue: types.StringValue("keep")}, &resp)
	if len(resp.Diagnostics) != 1 {
		t.Fatalf("want one diagnostic, got %v", resp.Diagnostics)
	}
	d := resp.Diagnostics[0]
	if d.Summary() != "Invalid transfer (on_destroy)" || !strings.Contains(d.Detail(), `"keep"`) {
		t.Errorf("%s: %s", d.Summary(), d.Detail())
	}
}

func TestRE2Pattern_RefusesWhatGoCannotCompileNamingTheAttribute(t *testing.T) {
	for _, tt := range []struct {
		in      types.String
		refused bool
	}{
		{types.StringValue(`^orders\.`), false},
		{types.StringValue(`orders(`), true},
		{types.StringValue(`(?<=a)b`), true}, // look-behind is not RE2
		{types.StringNull(), false},
		{types.StringUnknown(), false},
	} {
		var resp validator.StringResponse
		RE2Pattern().ValidateString(context.Background(), validator.StringRequest{Path: path.Root("name_regex"), ConfigValue: tt.in}, &resp)
		if resp.Diagnostics.HasError() != tt.refused {
			t.Errorf("%s: refused %v, want %v: %v", tt.in, resp.Diagnostics.HasError(), tt.refused, resp.Diagnostics)
			continue
		}
		for _, d := range resp.Diagnostics {
			if d.Summary() != "Invalid name_regex" || !strings.Contains(d.Detail(), "name_regex = ") || !strings.Contains(d.Detail(), "RE2") {
				t.Errorf("%s: %s: %s", tt.in, d.Summary(), d.Detail())
			}
		}
	}
}

func TestRule_RefusesWhatItsCheckRefusesLeadingTheDetailWithThePath(t *testing.T) {
	check := func(v string) *Refusal {
		if v == "ok" {
			return nil
		}
		return &Refusal{Summary: "Invalid duration", Detail: "set it to a Go duration."}
	}
	at := path.Root("brokers").AtMapKey("dc1").AtName("connect_timeout")
	for _, tt := range []struct {
		in      types.String
		refused bool
	}{
		{types.StringValue("ok"), false},
		{types.StringValue("ten seconds"), true},
		{types.StringNull(), false},
		{types.StringUnknown(), false}, // checked at configure, once known
	} {
		var resp validator.StringResponse
		Rule("a duration", check).ValidateString(context.Background(), validator.StringRequest{Path: at, ConfigValue: tt.in}, &resp)
		if resp.Diagnostics.HasError() != tt.refused {
			t.Errorf("%s: refused %v, want %v", tt.in, resp.Diagnostics.HasError(), tt.refused)
			continue
		}
		for _, d := range resp.Diagnostics {
			if d.Summary() != "Invalid duration" || d.Detail() != `brokers["dc1"].connect_timeout: set it to a Go duration.` {
				t.Errorf("%s: %s: %s", tt.in, d.Summary(), d.Detail())
			}
		}
	}
}
