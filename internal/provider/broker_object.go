package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// namesBroker is a model whose broker attribute names the broker it reads or writes.
type namesBroker interface{ brokerAttribute() types.String }

func (m *addressResourceModel) brokerAttribute() types.String  { return m.Broker }
func (m *queueResourceModel) brokerAttribute() types.String    { return m.Broker }
func (m *brokerDataSourceModel) brokerAttribute() types.String { return m.Broker }
func (m *queueDataSourceModel) brokerAttribute() types.String  { return m.Broker }

// modelAndClient starts a read or write of one broker object: the model M that get (a
// request's Plan.Get, State.Get or Config.Get) holds, ctx with the provider's secrets masked in
// logs, and the client of the broker the model names. ok is false when either could not be had;
// diags then say why.
func modelAndClient[M any, P interface {
	*M
	namesBroker
}](ctx context.Context, rt *providerRuntime, get func(context.Context, any) diag.Diagnostics, diags *diag.Diagnostics) (context.Context, *M, *artemis.Client, bool) {
	model := new(M)
	diags.Append(get(ctx, model)...)
	if diags.HasError() {
		return ctx, nil, nil, false
	}
	ctx, client := namedBrokerClient(ctx, rt, P(model).brokerAttribute(), diags)
	return ctx, model, client, client != nil
}

// readBrokerObject is the Read of a resource that is one object on a broker: its state read
// again through readInto, or removed when the broker no longer has the object, so that the
// next plan creates it again.
func readBrokerObject[M any, P interface {
	*M
	namesBroker
}](ctx context.Context, rt *providerRuntime, req resource.ReadRequest, resp *resource.ReadResponse,
	readInto func(context.Context, *artemis.Client, *M, *diag.Diagnostics) (gone bool)) {
	ctx, state, client, ok := modelAndClient[M, P](ctx, rt, req.State.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	if readInto(ctx, client, state, &resp.Diagnostics) {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// lookUp reads the broker object named name through get. ok is false when there is no object
// to use: gone when the broker does not have it, or when reading it failed, which is an error
// on the name attribute, summarized by cannot, in diags.
func lookUp[T any](ctx context.Context, get func(context.Context, string) (T, error), name, cannot string, diags *diag.Diagnostics) (obj T, gone, ok bool) {
	obj, err := get(ctx, name)
	if errors.Is(err, artemis.ErrNotFound) {
		return obj, true, false
	}
	if err != nil {
		diags.AddAttributeError(path.Root("name"), cannot, err.Error())
		return obj, false, false
	}
	return obj, false, true
}
