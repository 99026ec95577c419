package artemis

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// AddressInfo is what a broker says about one address: its routing types, the queues bound to
// it and the messages they hold.
type AddressInfo struct {
	Name string
	// RoutingTypes are ANYCAST and/or MULTICAST, sorted.
	RoutingTypes []string
	// QueueNames are the queues bound to the address, sorted.
	QueueNames []string
	// Messages is the number of messages its queues hold, paged ones included.
	Messages int64
	// AutoCreated addresses were made by the broker for a client; the broker may delete them
	// once they have no queues.
	AutoCreated bool
}

// Address reads an address. A missing address gives an error that wraps ErrNotFound.
func (c *Client) Address(ctx context.Context, name string) (AddressInfo, error) {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return AddressInfo{}, err
	}
	v, err := c.read(ctx, addressMBean(broker, name), "Address", "RoutingTypes", "QueueNames", "NumberOfMessages", "AutoCreated")
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return AddressInfo{}, fmt.Errorf("broker %q: address %q does not exist: %w", c.cfg.Name, name, ErrNotFound)
		}
		return AddressInfo{}, fmt.Errorf("reading address %q: %w", name, err)
	}
	a := AddressInfo{Name: name}
	d := attrDecoder{values: v}
	d.str("Address", &a.Name)
	d.decode("RoutingTypes", &a.RoutingTypes)
	d.decode("QueueNames", &a.QueueNames)
	d.int64("NumberOfMessages", &a.Messages)
	d.boolean("AutoCreated", &a.AutoCreated)
	if d.err != nil {
		return AddressInfo{}, fmt.Errorf("broker %q: reading address %q: %w", c.cfg.Name, name, d.err)
	}
	for i, rt := range a.RoutingTypes {
		a.RoutingTypes[i] = strings.ToUpper(rt)
	}
	sort.Strings(a.RoutingTypes)
	sort.Strings(a.QueueNames)
	return a, nil
}

// CreateAddress creates an address with the given routing types (ANYCAST, MULTICAST). An
// existing address is an error.
func (c *Client) CreateAddress(ctx context.Context, name string, routingTypes []string) error {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "createAddress(java.lang.String,java.lang.String)", name, strings.Join(routingTypes, ",")); err != nil {
		return fmt.Errorf("creating address %q with routing types %s: %w", name, strings.Join(routingTypes, ","), err)
	}
	return nil
}

// UpdateAddressRoutingTypes sets an address's routing types. The broker refuses to take away
// a routing type a queue of the address uses.
func (c *Client) UpdateAddressRoutingTypes(ctx context.Context, name string, routingTypes []string) error {
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "updateAddress(java.lang.String,java.lang.String)", name, strings.Join(routingTypes, ",")); err != nil {
		return fmt.Errorf("setting the routing types of address %q to %s: %w", name, strings.Join(routingTypes, ","), err)
	}
	return nil
}

// DeleteAddress deletes an address. Without force the broker refuses an address that queues
// are bound to; with force it deletes those queues too, with their messages.
func (c *Client) DeleteAddress(ctx context.Context, name string, force bool) error {
	defer c.snapshot.forget() // after the change: no snapshot taken meanwhile outlives it
	broker, err := c.brokerName(ctx)
	if err != nil {
		return err
	}
	if _, err := c.exec(ctx, brokerMBean(broker), "deleteAddress(java.lang.String,boolean)", name, force); err != nil {
		return fmt.Errorf("deleting address %q: %w", name, err)
	}
	return nil
}
