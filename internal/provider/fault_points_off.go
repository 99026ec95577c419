//go:build !faultpoints || !unix

package provider

// faultPointHooks is nil in every provider not built with -tags faultpoints, which
// builds the hooks that stop a run at a named point.
func faultPointHooks() runHooks { return nil }
