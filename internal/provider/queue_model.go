package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
)

// queueResourceModel is the artemis_queue resource's state. Attribute names follow the
// artemis_queue data source's, so a source queue's data feeds a target's resource one for one.
type queueResourceModel struct {
	Broker             types.String `tfsdk:"broker"`
	Name               types.String `tfsdk:"name"`
	ID                 types.String `tfsdk:"id"`
	Address            types.String `tfsdk:"address"`
	RoutingType        types.String `tfsdk:"routing_type"`
	Durable            types.Bool   `tfsdk:"durable"`
	Filter             types.String `tfsdk:"filter"`
	MaxConsumers       types.Int64  `tfsdk:"max_consumers"`
	Exclusive          types.Bool   `tfsdk:"exclusive"`
	LastValue          types.Bool   `tfsdk:"last_value"`
	LastValueKey       types.String `tfsdk:"last_value_key"`
	PurgeOnNoConsumers types.Bool   `tfsdk:"purge_on_no_consumers"`
	RingSize           types.Int64  `tfsdk:"ring_size"`
	Enabled            types.Bool   `tfsdk:"enabled"`
	AutoDelete         types.Bool   `tfsdk:"auto_delete"`
	ForceDestroy       types.Bool   `tfsdk:"force_destroy"`
}

// validate checks what the attributes say together. Unknown values pass: they are checked
// once known.
func (m queueResourceModel) validate() diag.Diagnostics {
	var diags diag.Diagnostics
	if !m.LastValueKey.IsNull() && !m.LastValueKey.IsUnknown() && m.LastValueKey.ValueString() != "" &&
		!m.LastValue.IsUnknown() && !m.LastValue.ValueBool() {
		diags.AddAttributeError(path.Root("last_value"), "last_value_key needs last_value = true",
			fmt.Sprintf("last_value_key is %q, which makes the queue a last-value queue, but last_value is not true. "+
				"Set last_value = true (the broker treats a queue with a key as a last-value queue either way, and reads it back so), "+
				"or remove last_value_key.", m.LastValueKey.ValueString()))
	}
	return diags
}

// definition is the queue the model declares.
func (m queueResourceModel) definition() artemis.QueueDefinition {
	return artemis.QueueDefinition{
		Name:               m.Name.ValueString(),
		Address:            m.Address.ValueString(),
		RoutingType:        m.RoutingType.ValueString(),
		Durable:            m.Durable.ValueBool(),
		Filter:             m.Filter.ValueString(),
		MaxConsumers:       int(m.MaxConsumers.ValueInt64()),
		Exclusive:          m.Exclusive.ValueBool(),
		LastValue:          m.LastValue.ValueBool(),
		LastValueKey:       m.LastValueKey.ValueString(),
		PurgeOnNoConsumers: m.PurgeOnNoConsumers.ValueBool(),
		RingSize:           m.RingSize.ValueInt64(),
		Enabled:            m.Enabled.ValueBool(),
		AutoDelete:         m.AutoDelete.ValueBool(),
	}
}

// fromBroker sets the model's attributes from what the broker says of the queue; broker,
// force_destroy and the id stay as they are (the id is set when missing, after an import).
func (m *queueResourceModel) fromBroker(q artemis.QueueInfo) {
	m.Address = types.StringValue(q.Address)
	m.RoutingType = types.StringValue(q.RoutingType)
	m.Durable = types.BoolValue(q.Durable)
	m.Filter = types.StringValue(q.Filter)
	m.MaxConsumers = types.Int64Value(int64(q.MaxConsumers))
	m.Exclusive = types.BoolValue(q.Exclusive)
	// 2.40 reports LastValue false for a queue made with a key and last-value true is what the
	// queue does; IsLastValue reads it the same on every version.
	m.LastValue = types.BoolValue(q.IsLastValue())
	m.LastValueKey = types.StringValue(q.LastValueKey)
	m.PurgeOnNoConsumers = types.BoolValue(q.PurgeOnNoConsumers)
	m.RingSize = types.Int64Value(q.RingSize)
	m.Enabled = types.BoolValue(q.Enabled)
	m.AutoDelete = types.BoolValue(q.AutoDelete)
	if m.ID.IsNull() || m.ID.IsUnknown() {
		m.ID = types.StringValue(brokerObjectID(m.Broker.ValueString(), m.Name.ValueString()))
	}
	if m.ForceDestroy.IsNull() {
		m.ForceDestroy = types.BoolValue(false)
	}
}

// unapplied names each attribute an update asked for that the broker read back otherwise: a
// broker that ignored part of an updateQueue (an older version) must not leave a state that
// claims it.
func (m queueResourceModel) unapplied(got queueResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	check := func(attr string, want, have fmt.Stringer) {
		if want.String() != have.String() {
			diags.AddAttributeError(path.Root(attr), "The broker did not apply "+attr,
				fmt.Sprintf("%s was to become %s, but the broker reads back %s after the update; the other attributes were updated as planned. "+
					"This broker version does not change %s in place: replace the queue (terraform apply -replace=...) to recreate it, "+
					"with force_destroy = true if it holds messages you may drop.", attr, want, have, attr))
		}
	}
	check("filter", m.Filter, got.Filter)
	check("max_consumers", m.MaxConsumers, got.MaxConsumers)
	check("exclusive", m.Exclusive, got.Exclusive)
	check("purge_on_no_consumers", m.PurgeOnNoConsumers, got.PurgeOnNoConsumers)
	check("ring_size", m.RingSize, got.RingSize)
	check("enabled", m.Enabled, got.Enabled)
	return diags
}
