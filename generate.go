package main

// Documentation in docs/ is generated from the provider schema, examples/ and templates/.
// tfplugindocs builds the provider and reads its schema through the terraform binary on PATH,
// so this works offline. It is pinned in the tools module to keep it out of this go.mod.
//
//go:generate terraform fmt -recursive ./examples/
//go:generate go run -C tools/docgen github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-dir ../.. --provider-name artemis
