// Package planmodifiers holds the plan modifiers of the provider's resources: what a plan says
// of a computed value before apply decides it, so that a plan shows "(known after apply)" only
// where apply can change the value.
//
// Each modifier is a small value built by a constructor (KeepStateWhen) and implements the
// framework's planmodifier interfaces for the attribute types it supports. Modifiers read only
// the plan request (config, plan and prior state); they never reach a broker or the ledger, and
// the package imports nothing of this module.
package planmodifiers
