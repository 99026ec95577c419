//go:build generate

// Package tools pins the documentation generator in its own module so that its dependencies
// stay out of the provider's go.mod.
package tools

import (
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
)
