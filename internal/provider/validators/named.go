package validators

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// NamedString runs the library's string validators inner and puts the attribute's name into
// the summaries of what they refuse, keeping their details.
func NamedString(inner ...validator.String) validator.String {
	return namedString{named[validator.String]{inner}}
}

// NamedList is NamedString for list attributes.
func NamedList(inner ...validator.List) validator.List {
	return namedList{named[validator.List]{inner}}
}

// named is what NamedString and NamedList share: the validators they run, their description,
// and the renaming. Each embeds it and adds the one Validate method of its kind.
type named[V validator.Describer] struct{ inner []V }

func (v named[V]) Description(ctx context.Context) string {
	parts := make([]string, len(v.inner))
	for i, in := range v.inner {
		parts[i] = in.Description(ctx)
	}
	return strings.Join(parts, "; ")
}

func (v named[V]) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

// each runs validate with every inner validator, on the attribute at p, and renames what they
// refuse.
func (v named[V]) each(p path.Path, validate func(V) diag.Diagnostics) diag.Diagnostics {
	var out diag.Diagnostics
	for _, in := range v.inner {
		out.Append(renamed(p, validate(in))...)
	}
	return out
}

type namedString struct{ named[validator.String] }

func (v namedString) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	resp.Diagnostics.Append(v.each(req.Path, func(in validator.String) diag.Diagnostics {
		var r validator.StringResponse
		in.ValidateString(ctx, req, &r)
		return r.Diagnostics
	})...)
}

type namedList struct{ named[validator.List] }

func (v namedList) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	resp.Diagnostics.Append(v.each(req.Path, func(in validator.List) diag.Diagnostics {
		var r validator.ListResponse
		in.ValidateList(ctx, req, &r)
		return r.Diagnostics
	})...)
}

// renamed gives each error the summary InvalidSummary of its own path (of p when it has none),
// keeping its detail.
func renamed(p path.Path, diags diag.Diagnostics) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range diags {
		at := p
		if wp, ok := d.(diag.DiagnosticWithPath); ok && !wp.Path().Equal(path.Empty()) {
			at = wp.Path()
		}
		if d.Severity() == diag.SeverityError {
			out.AddAttributeError(at, InvalidSummary(at), d.Detail())
		} else {
			out.AddAttributeWarning(at, d.Summary()+" ("+at.String()+")", d.Detail())
		}
	}
	return out
}
