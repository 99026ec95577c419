// Package planmodifiers holds the plan modifiers of the provider's resources: what a plan says
// of a computed value before apply decides it.
//
//	doc.go         this map
//	keep_state.go  KeepStateWhen: a computed value that a finished run no longer changes
package planmodifiers
