//go:build !faultpoints || !unix

package provider

import "github.com/artemis-studio/terraform-provider-artemis/internal/artemis"

// faultPointHooks is nil in every provider not built with -tags faultpoints, which
// builds the hooks that stop a run at a named point.
func faultPointHooks() runHooks { return nil }

// faultQueueDeleteHooks is the zero value in every provider not built with -tags faultpoints.
func faultQueueDeleteHooks() artemis.DeleteEmptyQueueHooks { return artemis.DeleteEmptyQueueHooks{} }
