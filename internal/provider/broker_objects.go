package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// brokerObjectID is the id of an object a resource declares on a broker: `<broker>/<name>`,
// the form import takes too.
func brokerObjectID(broker, name string) string { return broker + "/" + name }

// importBrokerObject reads an import id `<broker>/<name>` into the broker attribute and the
// attribute that names the object (name, or match for address settings). Broker keys hold no
// '/', so the first one ends the key and a name may hold more.
func importBrokerObject(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse, nameAttr, example string) {
	broker, name, ok := strings.Cut(req.ID, "/")
	if !ok || broker == "" || name == "" {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("The import id %q is not `<broker>/<%s>`. Give the broker's key in the provider's `brokers` map, a slash, and the %s, e.g. %q.",
				req.ID, nameAttr, nameAttr, example))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("broker"), broker)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(nameAttr), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
}

// refuseDeletingMessages adds the refusal to delete an object that holds messages, naming how
// many, where, and the two ways on.
func refuseDeletingMessages(diags *diag.Diagnostics, what string, messages int64) {
	diags.AddAttributeError(path.Root("force_destroy"), "Refusing to delete messages",
		fmt.Sprintf("%s holds %d message(s), which deleting it would drop (a change that needs a new %s deletes it too). "+
			"Nothing was deleted. Move the messages elsewhere first (for example with an artemis_queue_transfer), "+
			"or, to drop them, set force_destroy = true, apply, and then destroy or replace it.",
			what, messages, strings.Fields(what)[0]))
}

// forceDestroyDescription documents the force_destroy attribute of a resource for a broker object.
func forceDestroyDescription(object string) string {
	return "Whether destroying (or replacing) the " + object + " may drop the messages it holds. Default `false`: " +
		"a destroy of a " + object + " that holds messages is refused, and the refusal says how many. " +
		"Set it to `true` and apply before the destroy that should drop them."
}

// stringsFromSet reads a set of strings.
func stringsFromSet(ctx context.Context, set types.Set, diags *diag.Diagnostics) []string {
	var out []string
	diags.Append(set.ElementsAs(ctx, &out, false)...)
	return out
}
