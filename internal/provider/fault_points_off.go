//go:build !faultpoints || !unix

package provider

// faultPointHooks is nil in every provider not built with -tags faultpoints (fault_points.go).
func faultPointHooks() runHooks { return nil }
