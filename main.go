// Command terraform-provider-artemis serves the Terraform provider for Apache ActiveMQ Artemis.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/artemis-studio/terraform-provider-artemis/internal/provider"
)

// version is set by goreleaser at release time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "start the provider for a debugger such as delve and print the TF_REATTACH_PROVIDERS value to use")
	flag.Parse()

	opts := providerserver.ServeOpts{
		// Keep in step with the provider name passed to tfplugindocs in generate.go.
		Address: "registry.terraform.io/artemis-studio/artemis",
		Debug:   debug,
	}
	if err := providerserver.Serve(context.Background(), provider.New(version), opts); err != nil {
		log.Fatal(err)
	}
}
