package validators

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// Int64Range refuses a tuning value outside [min, max] (max 0: no upper bound), saying what to
// set instead (def, the default) and why the bound exists.
func Int64Range(minimum, maximum, def int64, why string) validator.Int64 {
	var check validator.Int64 = int64validator.AtLeast(minimum)
	bounds := fmt.Sprintf("at least %d", minimum)
	if maximum != 0 {
		check, bounds = int64validator.Between(minimum, maximum), fmt.Sprintf("from %d to %d", minimum, maximum)
	}
	return reworded{check: check, description: bounds, detail: func(p path.Path, n int64) string {
		return fmt.Sprintf("%s = %d is out of range: set it to a whole number %s, or leave it out for the default %d. %s",
			p, n, bounds, def, why)
	}}
}

// PositiveRate refuses a rate cap below one message a second.
func PositiveRate() validator.Int64 {
	return reworded{check: int64validator.AtLeast(1), description: "at least 1 (messages per second)",
		detail: func(p path.Path, n int64) string {
			return fmt.Sprintf("%s = %d is not a rate: set it to a whole number of messages per second, at least 1, "+
				"or leave it out to move as fast as the brokers allow.", p, n)
		}}
}

// reworded lets the library's check decide and words its refusal for the operator: the
// library's own text says neither what to set instead nor why.
type reworded struct {
	check       validator.Int64
	description string
	detail      func(p path.Path, value int64) string
}

func (v reworded) Description(context.Context) string { return v.description }

func (v reworded) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v reworded) ValidateInt64(ctx context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	var checked validator.Int64Response
	v.check.ValidateInt64(ctx, req, &checked)
	if !checked.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, InvalidSummary(req.Path), v.detail(req.Path, req.ConfigValue.ValueInt64()))
}
