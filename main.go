// Command terraform-provider-artemis serves the Terraform provider for Apache ActiveMQ Artemis.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/debug"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/artemis-studio/terraform-provider-artemis/internal/provider"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// version and commit are set by goreleaser at release time
// (-ldflags "-X main.version=... -X main.commit=...").
var (
	version = "dev"
	commit  = "none"
)

func main() {
	var debugFlag, versionFlag bool
	flag.BoolVar(&debugFlag, "debug", false, "start the provider for a debugger such as delve and print the TF_REATTACH_PROVIDERS value to use")
	flag.BoolVar(&versionFlag, "version", false, "print the provider's version and commit, and exit")
	flag.Parse()
	if versionFlag {
		fmt.Println(versionLine())
		return
	}

	if limit, ok := memoryLimit(os.LookupEnv); ok {
		debug.SetMemoryLimit(limit)
	}
	opts := providerserver.ServeOpts{
		// Keep in step with the provider name passed to tfplugindocs by go generate.
		Address: "registry.terraform.io/artemis-studio/artemis",
		Debug:   debugFlag,
	}
	if err := providerserver.Serve(context.Background(), provider.New(version), opts); err != nil {
		log.Fatal(err)
	}
}

// memoryLimit is the soft memory limit the provider process sets for itself: the one that
// keeps a relay with the default max_in_flight_bytes near what it holds (transfer.MemoryLimit),
// so that large messages do not double the process's memory before Go collects them. An
// operator's GOMEMLIMIT, which the Go runtime has applied already, is left alone.
func memoryLimit(lookupEnv func(string) (string, bool)) (int64, bool) {
	if _, set := lookupEnv("GOMEMLIMIT"); set {
		return 0, false
	}
	return transfer.MemoryLimit(transfer.DefaultMaxInFlightBytes), true
}

// versionLine is what -version prints: the name, the version and the commit it was built from.
func versionLine() string {
	return fmt.Sprintf("terraform-provider-artemis %s (commit %s)", version, commit)
}
