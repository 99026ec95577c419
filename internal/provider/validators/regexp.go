package validators

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// RE2Pattern refuses a string that is not a regular expression in RE2 syntax (Go's and
// Terraform's own `regex`), so that a typo fails the plan rather than the read.
func RE2Pattern() validator.String { return re2Pattern{} }

type re2Pattern struct{}

func (re2Pattern) Description(context.Context) string {
	return "must be a regular expression in RE2 syntax"
}

func (v re2Pattern) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (re2Pattern) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	expr := req.ConfigValue.ValueString()
	if _, err := regexp.Compile(expr); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+req.Path.String(),
			fmt.Sprintf("%s = %q is not a regular expression in RE2 syntax: %v. Write a pattern such as \"^orders\\\\.\" "+
				"(a backslash is written twice in HCL).", req.Path, expr, err))
	}
}
