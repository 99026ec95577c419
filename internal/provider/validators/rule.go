package validators

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Refusal is why a value of the provider block cannot be used: a summary that says what is
// wrong and a detail that says what to set instead.
type Refusal struct {
	Summary, Detail string
}

// Rule refuses every known string that check refuses (check returns nil to accept), on the
// attribute's path, with that path leading the detail. The provider's Configure runs the same
// check on values known only then and on ARTEMIS_BROKERS, so that a value is refused in the same
// words whenever it is found. The path leads the detail because Terraform shows an error in the
// provider block at the block, not at the attribute.
func Rule(description string, check func(value string) *Refusal) validator.String {
	return rule{description: description, check: check}
}

type rule struct {
	description string
	check       func(string) *Refusal
}

func (v rule) Description(context.Context) string { return v.description }

func (v rule) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v rule) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return // an unknown value is checked by Configure, once it is known
	}
	if r := v.check(req.ConfigValue.ValueString()); r != nil {
		resp.Diagnostics.AddAttributeError(req.Path, r.Summary, req.Path.String()+": "+r.Detail)
	}
}

// OneOfPair refuses a string when it and its sibling attribute (an attribute of the same
// object, such as tls.ca_cert_pem beside tls.ca_cert_file) are both set to something other than
// "", with refusal's words and the path leading its detail, as Rule does. A null, unknown or
// empty value on either side is not set: Configure refuses that pair once it is known, in the
// same words.
func OneOfPair(sibling string, refusal Refusal) validator.String {
	return oneOfPair{sibling: sibling, refusal: refusal}
}

type oneOfPair struct {
	sibling string
	refusal Refusal
}

func (v oneOfPair) Description(context.Context) string {
	return "not set together with " + v.sibling
}

func (v oneOfPair) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v oneOfPair) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || req.ConfigValue.ValueString() == "" {
		return
	}
	var other types.String
	if diags := req.Config.GetAttribute(ctx, req.Path.ParentPath().AtName(v.sibling), &other); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	if other.IsNull() || other.IsUnknown() || other.ValueString() == "" {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, v.refusal.Summary, req.Path.String()+": "+v.refusal.Detail)
}
